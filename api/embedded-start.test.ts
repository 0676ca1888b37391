import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { start } from './server.ts';

describe('the embedded run (npm start with no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-embedded-'));
  // PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = () => loadConfig({
    PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent',
    EMBEDDED_PG_PORT: String(30000 + Math.floor(Math.random() * 9000)),
  });

  it('starts PostgreSQL, loads the demo registry once, and keeps data across restarts', async () => {
    const first = await start(config(), pino({ level: 'silent' }));
    try {
      const chains = await (await fetch(`${first.url}/v1/chains`)).json();
      expect(chains.data.map((c: { chainId: string }) => c.chainId)).toEqual(expect.arrayContaining(['31337', '31338']));
      await first.knex('chains').where({ chain_id: '31337' }).update({ name: 'Renamed by operator' });
    } finally {
      await first.stop();
    }
    const second = await start(config(), pino({ level: 'silent' }));
    try {
      const chain = await (await fetch(`${second.url}/v1/chains/31337`)).json();
      // Same data directory: the operator's change survived and the demo registry was not re-imported over it.
      expect(chain.name).toBe('Renamed by operator');
    } finally {
      await second.stop();
    }
  });
});
