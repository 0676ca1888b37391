import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedDatabase } from '../db/embedded.ts';
import { dropDatabase } from '../db/drop-database.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { ProverPool } from '../prover/pool.ts';
import { VECTORS_JSON, buildVectors } from '../contracts/soroban/vectors.ts';

/**
 * Writes contracts/soroban/vectors.json: the Soroban contracts' test vectors (contracts/soroban/vectors.ts)
 * with real proofs, over a fresh database (embedded PostgreSQL, or a new database on DATABASE_URL).
 * Run: `npx tsx tools/soroban-vectors.ts`.
 */
async function main(): Promise<void> {
  let url = process.env.DATABASE_URL;
  let stop = async () => {};
  if (!url) {
    const dir = mkdtempSync(join(tmpdir(), 'soroban-vectors-pg-'));
    chmodSync(dir, 0o755);
    const server = await startEmbeddedDatabase({ dataDir: join(dir, 'data'), port: 40000 + Math.floor(Math.random() * 20000), persistent: false });
    url = server.url;
    stop = async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const adminKnex = createKnex(url, 1);
  const name = `soroban_vectors_${process.pid}`;
  await adminKnex.raw(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(url);
  dbUrl.pathname = `/${name}`;
  const knex = createKnex(dbUrl.toString(), 2);
  const pool = new ProverPool({ size: 1, maxQueue: 4 });
  try {
    await migrateToLatest(knex);
    const vectors = await buildVectors(knex, (input) => pool.prove(input));
    writeFileSync(VECTORS_JSON, `${JSON.stringify(vectors, null, 2)}\n`);
    console.log(`wrote ${VECTORS_JSON}`);
  } finally {
    await pool.close();
    await knex.destroy();
    await dropDatabase(adminKnex, name);
    await adminKnex.destroy();
    await stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
