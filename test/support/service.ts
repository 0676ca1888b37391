import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../../config/config.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface TestService extends RunningService {
  db: TestDatabase;
  /** fetch against the service: `service.request('/v1/ads')`. */
  request(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The real service on port 0 over a fresh database of its own (call in `beforeAll`, `close()` in
 * `afterAll`). `env` overrides configuration like environment variables would; `options.logger`
 * replaces the silent logger (a test reading what the service logs); `options.beforeStart` writes
 * to the migrated database before the service opens it (a registry it starts with).
 */
export async function startTestService(
  env: Record<string, string> = {}, options: { logger?: Logger; beforeStart?: (knex: TestDatabase['knex']) => Promise<void> } = {},
): Promise<TestService> {
  const db = await createTestDatabase();
  await options.beforeStart?.(db.knex);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-test-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000',
    AUTH_RATE_LIMIT_MAX: '100000',
    // Tests run the books audit themselves (container.runAudit): no cron job acting behind their backs.
    BOOKS_AUDIT_CRON: 'off',
    RETENTION_CRON: 'off',
    // The relayer's keeper only for the tests that ask for it: elsewhere a test plays every party itself.
    KEEPER_ENABLED: 'false',
    // The Stellar devnet only for the tests that ask for it (it deploys for about 10 s).
    STELLAR_DEVNET: 'off',
    ...env,
  });
  const service = await start(config, options.logger ?? pino({ level: config.LOG_LEVEL }));
  return {
    ...service,
    db,
    request: (pathAndQuery, init) => fetch(`${service.url}${pathAndQuery}`, init),
    async close() {
      await service.stop();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
