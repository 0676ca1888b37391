import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runTool } from '../test/support/deploy-tools.ts';
// @ts-expect-error a plain .mjs script without types
import { NODE_PIN } from '../scripts/install-node.mjs';

const dockerfile = readFileSync(new URL('./Dockerfile', import.meta.url), 'utf8');
const dockerignore = readFileSync(new URL('../.dockerignore', import.meta.url), 'utf8').split('\n').map((l) => l.trim());

/** True when .dockerignore keeps `file` (a path from the repository root) out of the build context. */
function ignored(file: string): boolean {
  const patterns = dockerignore.filter((line) => line && !line.startsWith('#'));
  const regexes = patterns.map((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\//g, '(?:.*/)?').replace(/\*/g, '[^/]*')}$`));
  const parts = file.split('/');
  return parts.some((_, i) => regexes.some((r) => r.test(parts.slice(0, i + 1).join('/'))));
}

/** The instructions of the last stage (the image that runs). */
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

describe('deploy/Dockerfile', () => {
  it('passes hadolint with no finding', () => {
    const { status, output } = runTool('hadolint', ['--no-color', 'deploy/Dockerfile'], ROOT);
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('builds with dev dependencies and runs a slim image as a numeric non-root user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:\d+\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/m);
    // The image runs the Node release the tests run on (scripts/install-node.mjs), Node 24 LTS.
    expect(dockerfile).toContain(`ARG NODE_IMAGE=node:${NODE_PIN.version}-bookworm-slim@sha256:`);
    expect(dockerfile).toMatch(/AS build[\s\S]*npm ci --ignore-scripts[\s\S]*npm prune --omit=dev/);
    expect(finalStage).toMatch(/^USER [1-9]\d*:[1-9]\d*$/m);
    expect(finalStage).toMatch(/^CMD \["api"\]$/m);
  });

  it('starts node itself as the main process (no npm or shell between SIGTERM and node), with no npm in the image', () => {
    expect(finalStage).toMatch(/^ENTRYPOINT \["node", "--max-semi-space-size=32", "--import", "\.\/entrypoints\/hold-secrets\.mjs", "--import", "tsx", "entrypoints\/command\.ts"\]$/m);
    expect(finalStage).toMatch(/^FROM \$\{DEBIAN_IMAGE\} AS runtime$/m);
    expect(finalStage).toContain('COPY --from=node /usr/local/bin/node /usr/local/bin/node');
    expect(finalStage).not.toMatch(/node_modules\/npm/);
  });

  it('builds with an npm of the major that writes the lockfile (package.json devEngines), not the base image\'s npm 10', () => {
    const pinned = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).devEngines.packageManager;
    expect(pinned).toMatchObject({ name: 'npm', onFail: 'error' });
    expect(dockerfile).toContain(`ARG NPM_VERSION=${pinned.version.replace(/^\^/, '')}`);
    expect(dockerfile).toMatch(/AS build\nARG NPM_VERSION\n[\s\S]*npm install --global [^\n]*npm@\$\{NPM_VERSION\}[\s\S]*npm ci --ignore-scripts/);
  });

  it('copies only sources that exist and that .dockerignore lets through', () => {
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(sources).toContain('prover/native');
    for (const source of sources.filter((s) => s !== '.')) {
      expect(existsSync(path.join(ROOT, source)), source).toBe(true);
      expect(ignored(source), source).toBe(false);
    }
  });

  it('keeps in the build context what the processes load at run time', () => {
    for (const file of ['entrypoints/api-main.ts', 'entrypoints/migrate-main.ts', 'entrypoints/compose/worker.ts', 'entrypoints/parts/chains.ts', 'db/migrations', 'prover/proof-worker.mjs', 'circuits/build/deposit_final.zkey',
      'circuits/build/deposit.wasm', 'devnet/registry.json', 'contracts/evm/src', 'package-lock.json']) {
      expect(existsSync(path.join(ROOT, file)), file).toBe(true);
      expect(ignored(file), file).toBe(false);
    }
    for (const file of ['.data/secrets.json', 'deploy/relayer.env', 'entrypoints/service.test.ts', 'test/global-setup.ts', '.tools/deploy/bin/kubectl', 'target/prover/relayer-groth16']) {
      expect(ignored(file), file).toBe(true);
    }
  });

  it('builds the PKCS#11 signer with the command of its package script and ships its binary where the signer seam starts it', () => {
    const script = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts['build:signer'];
    const signerStage = dockerfile.slice(dockerfile.indexOf(' AS signer'), dockerfile.indexOf(' AS build'));
    expect(dockerfile).toMatch(/^FROM native AS signer$/m);
    expect(signerStage).toContain(`\n && ${script}\n`);
    expect(finalStage).toContain('COPY --from=signer --chown=0:0 /out/devnet/relayer-pkcs11-signer /app/target/devnet/relayer-pkcs11-signer');
  });

  it('builds the native prover with the command of its package script and ships only its binary', () => {
    const script = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts['build:native'];
    const nativeStage = dockerfile.slice(dockerfile.indexOf(' AS native'), dockerfile.indexOf(' AS build'));
    expect(nativeStage).toContain(`\n && ${script}\n`);
    expect(nativeStage).not.toMatch(/^COPY .*package\.json/m);
    // cargo refuses a workspace with a member missing: the stage copies every one.
    const members = [...readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8').matchAll(/^\s*"([\w/-]+)",?$/gm)].map((m) => m[1]!);
    expect(members).toContain('prover/native');
    const copied = [...nativeStage.matchAll(/^COPY (\S+) /gm)].map((m) => m[1]!);
    for (const member of members) expect(copied.some((source) => `${member}/`.startsWith(`${source}/`) || source.startsWith(`${member}/`)), member).toBe(true);
    expect(finalStage).toContain('COPY --from=native --chown=0:0 /out/prover/relayer-groth16 /app/target/prover/relayer-groth16');
  });

  it('builds the native prover on the Rust version rust-toolchain.toml pins (the one the stand-in copies)', () => {
    const channel = /^channel = "(\d+\.\d+\.\d+)"$/m.exec(readFileSync(path.join(ROOT, 'rust-toolchain.toml'), 'utf8'))?.[1];
    expect(channel).toBeDefined();
    expect(dockerfile).toMatch(new RegExp(`^ARG RUST_IMAGE=rust:${channel!.replace(/\./g, '\\.')}-slim-bookworm@sha256:[0-9a-f]{64}$`, 'm'));
  });

  it('names every base image by tag and digest, and every FROM a pinned base or an earlier stage', () => {
    const bases = [...dockerfile.matchAll(/^ARG (\w+_IMAGE)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(bases.map(([name]) => name).sort()).toEqual(['DEBIAN_IMAGE', 'NODE_IMAGE', 'RUST_IMAGE']);
    for (const [name, reference] of bases) expect(reference, name).toMatch(/^[a-z0-9.\/-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
    const stages = new Set<string>();
    for (const [, from, stage] of dockerfile.matchAll(/^FROM (\S+)(?: AS (\S+))?$/gm)) {
      const arg = /^\$\{(\w+)\}$/.exec(from!)?.[1];
      expect(arg ? bases.some(([name]) => name === arg) : stages.has(from!), `FROM ${from}`).toBe(true);
      if (stage) stages.add(stage);
    }
  });

  it('keeps secrets, local state and tools out of the build context', () => {
    for (const entry of ['.git', 'node_modules', '**/node_modules', '.data', '.tools', 'target', '.env', '*.env', '**/*.env']) expect(dockerignore).toContain(entry);
    expect(dockerfile).not.toMatch(/\.data|secrets\.json|\.env\b/);
  });
});
