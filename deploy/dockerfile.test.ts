import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT, runTool } from '../test/support/deploy-tools.ts';

const dockerfile = readFileSync(new URL('./Dockerfile', import.meta.url), 'utf8');
const dockerignore = readFileSync(new URL('../.dockerignore', import.meta.url), 'utf8').split('\n').map((l) => l.trim());

/** The instructions of the last stage (the image that runs). */
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

describe('deploy/Dockerfile', () => {
  it('passes hadolint with no finding', () => {
    const { status, output } = runTool('hadolint', ['--no-color', 'deploy/Dockerfile'], ROOT);
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('builds with dev dependencies and runs a slim image as a numeric non-root user', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:\d+\.\d+\.\d+-bookworm-slim$/m);
    expect(dockerfile).toMatch(/AS build[\s\S]*npm ci --ignore-scripts[\s\S]*npm prune --omit=dev/);
    expect(finalStage).toMatch(/^USER [1-9]\d*:[1-9]\d*$/m);
    expect(finalStage).toMatch(/^ENTRYPOINT \["npm", "run", "--silent"\]$/m);
    expect(finalStage).toMatch(/^CMD \["api"\]$/m);
  });

  it('keeps secrets, local state and tools out of the build context', () => {
    for (const entry of ['.git', 'node_modules', '.data', '.tools', 'target', '.env', '*.env', '**/*.env']) expect(dockerignore).toContain(entry);
    expect(dockerfile).not.toMatch(/\.data|secrets\.json|\.env\b/);
  });
});
