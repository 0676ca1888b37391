import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { dropDatabase } from '../db/drop-database.ts';
import { createKnex } from '../db/knex.ts';

const root = new URL('..', import.meta.url).pathname;

/** `node --import tsx entrypoints/command.ts <args>` as the image runs it, with `env` instead of ours. */
function command(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'entrypoints/command.ts', ...args], {
    cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...env }, timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the image entry point (entrypoints/command.ts)', () => {
  it('refuses an unknown command with exit 64, naming the commands it knows', () => {
    const { status, stderr } = command(['apii'], {});
    expect(status).toBe(64);
    expect(stderr).toContain("unknown command 'apii': expected one of api, worker, prover, migrate, reconcile, embedded");
  });

  it('runs the process the command names in its own node process (migrate without DATABASE_URL stops with 78)', () => {
    const { status, stderr } = command(['migrate'], {});
    expect(status).toBe(78);
    expect(stderr).toContain('DATABASE_URL is required for migrate');
  });

  it('runs migrate in production with DATABASE_URL alone, where the api with the same environment stops with 78 naming its own settings', async () => {
    const adminUrl = inject('postgresAdminUrl');
    const name = `test_migrate_${randomBytes(6).toString('hex')}`;
    const admin = createKnex(adminUrl, 1);
    await admin.raw(`CREATE DATABASE ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const env = { NODE_ENV: 'production', DATABASE_URL: url.toString() };
    try {
      const migrate = command(['migrate'], { ...env, LOG_LEVEL: 'info' });
      expect(migrate.status, migrate.stderr).toBe(0);
      expect(migrate.stdout).toContain('schema is up to date');
      const migrated = createKnex(url.toString(), 1);
      try {
        expect(await migrated.schema.hasTable('idempotency_keys')).toBe(true);
      } finally {
        await migrated.destroy();
      }
      const api = command(['api'], env);
      expect(api.status).toBe(78);
      expect(api.stderr).toMatch(/SIWE_DOMAIN: must be set in production[\s\S]*RELAYER_SIGNER: is env/);
    } finally {
      await dropDatabase(admin, name);
      await admin.destroy();
    }
  }, 300_000);

  it('runs reconcile: on the embedded runner it says the runner reconciles itself and exits 0; an unknown option exits 64', () => {
    // No TEMPORAL_ADDRESS: nothing is asked of the database or Temporal.
    const embedded = command(['reconcile'], { DATABASE_URL: 'postgres://relayer@127.0.0.1:1/relayer', LOG_LEVEL: 'info' });
    expect(embedded.status, embedded.stderr).toBe(0);
    expect(embedded.stdout).toContain('the embedded runner reconciles its trades itself');
    const unknown = command(['reconcile', '--force'], {});
    expect(unknown.status).toBe(64);
    expect(unknown.stderr).toContain("unknown argument '--force'");
  }, 120_000);
});
