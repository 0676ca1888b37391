import { readFileSync } from 'node:fs';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runTool } from '../test/support/deploy-tools.ts';
import { configSettings, packageScripts } from '../test/support/known-names.ts';
import { PROCESS_COMMANDS } from '../entrypoints/process-commands.ts';

/**
 * The compose file, the env example, the Dockerfile, the Kubernetes manifests and deploy/README.md
 * name only package scripts that exist and settings config.ts validates: a renamed script or a
 * misspelt variable fails here, not at 3 a.m. in a pod that ignores it.
 */

const read = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
const compose = parse(read('./compose.yaml'), { merge: true });
const composeText = read('./compose.yaml');
/** Services built from our image (the relayer processes). */
const relayerServices = Object.entries<any>(compose.services).filter(([, s]) => s.build?.dockerfile === 'deploy/Dockerfile');
/** Variables compose itself interpolates (`${NAME}`, `${NAME:-default}`, `${NAME:?message}`). */
const interpolated = [...composeText.matchAll(/\$\{(\w+)(:[-?][^}]*)?\}/g)].map((m) => ({ name: m[1]!, required: m[2]?.startsWith(':?') ?? false }));
const exampleKeys = read('./relayer.env.example').split('\n').filter((l) => /^\w+=/.test(l)).map((l) => l.slice(0, l.indexOf('=')));

describe('deploy files name what exists', () => {
  it('compose, the image default and the manifests run image commands that exist, in every relayer service', () => {
    expect(relayerServices.map(([name]) => name).sort()).toEqual(['api', 'migrate', 'prover', 'worker']);
    const scripts = relayerServices.map(([, s]) => s.command[0] as string);
    scripts.push(JSON.parse(/^CMD (.*)$/m.exec(read('./Dockerfile'))![1]!)[0]);
    for (const overlay of ['deploy/k8s/overlays/production', 'deploy/k8s/overlays/production-hpa']) {
      const { output } = runTool('kubectl', ['kustomize', overlay]);
      for (const doc of parseAllDocuments(output).map((d) => d.toJS())) {
        for (const container of doc.spec?.template?.spec?.containers ?? []) scripts.push(...container.args);
      }
    }
    for (const script of scripts) expect(Object.keys(PROCESS_COMMANDS), `command ${script}`).toContain(script);
  });

  it('each image command loads the entry point its package script of the same name runs (embedded: npm start)', () => {
    const scripts = JSON.parse(read('../package.json')).scripts as Record<string, string>;
    for (const [command, entry] of Object.entries(PROCESS_COMMANDS)) {
      const script = command === 'embedded' ? 'start' : command;
      expect(packageScripts, command).toContain(script);
      expect(scripts[script], command).toMatch(new RegExp(` entrypoints/${entry.slice(2).replace('.', '\\.')}$`));
    }
  });

  it('compose passes the relayer processes only settings config.ts knows', () => {
    for (const [name, service] of relayerServices) {
      for (const key of Object.keys(service.environment)) expect(configSettings, `${name}: ${key}`).toContain(key);
    }
  });

  it('the env example holds settings or compose variables only, every required one, and no value for any secret', () => {
    const composeVariables = new Set(interpolated.map((v) => v.name));
    for (const key of exampleKeys) expect(configSettings.has(key) || composeVariables.has(key), key).toBe(true);
    for (const variable of interpolated.filter((v) => v.required)) expect(exampleKeys, variable.name).toContain(variable.name);
    for (const secret of ['POSTGRES_PASSWORD', 'GRAFANA_ADMIN_PASSWORD', 'JWT_SECRET', 'RELAYER_EVM_PRIVATE_KEY', 'RELAYER_STELLAR_SECRET', 'SEP10_SIGNING_SECRET']) {
      expect(read('./relayer.env.example')).toMatch(new RegExp(`^${secret}=$`, 'm'));
    }
  });

  it('the runtime image sets only settings config.ts knows (besides npm\'s and tsx\'s own)', () => {
    // The build stages' own (CARGO_HOME for cargo) never reach a process of the image.
    const dockerfile = read('./Dockerfile');
    const runtime = dockerfile.slice(dockerfile.indexOf(' AS runtime'));
    const blocks = [...runtime.matchAll(/^ENV ((?:.*\\\n)*.*)$/gm)].map((m) => m[1]!);
    const keys = blocks.flatMap((block) => [...block.matchAll(/(\w+)=/g)].map((m) => m[1]!)).filter((k) => !/^(npm_config_|TSX_)/.test(k));
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(configSettings, key).toContain(key);
  });

  it('deploy/README.md runs package scripts that exist', () => {
    const mentioned = [...read('./README.md').matchAll(/npm run (?:-s |--silent )?([\w:-]+)/g)].map((m) => m[1]!);
    expect(mentioned.length).toBeGreaterThan(0);
    for (const script of mentioned) expect(packageScripts, script).toContain(script);
  });
});
