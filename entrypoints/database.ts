import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { loadDemoRegistryIfEmpty } from '../registry/demo.ts';

/** An open database pool and, in the embedded run, the PostgreSQL this process started. */
export interface OpenDatabase {
  knex: Knex;
  /** Its connection URL (what pg-boss and other clients connect to). */
  url: string;
  /** True when this process runs its own PostgreSQL (no DATABASE_URL). */
  embedded: boolean;
  /** Destroys the pool, then stops the embedded PostgreSQL if there is one. */
  close(): Promise<void>;
}

/**
 * Opens `DATABASE_URL`, or starts the embedded PostgreSQL (data in DATA_DIR/pg, kept across
 * restarts) when it is unset. With `migrate`, brings the schema up to date; on an empty embedded
 * database it also loads the demo registry, so `npm start` has chains and routes to show.
 */
export async function openDatabase(config: Config, logger: Logger, options: { migrate: boolean }): Promise<OpenDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedDatabase({
      dataDir: path.join(config.DATA_DIR, 'pg'),
      port: config.EMBEDDED_PG_PORT,
      persistent: true,
      onLog: (line) => logger.debug({ postgres: line.trim() }),
    });
    databaseUrl = embedded.url;
    logger.info({ port: config.EMBEDDED_PG_PORT, dataDir: embedded.dataDir }, 'embedded PostgreSQL started');
  }
  const knex = createKnex(databaseUrl, config.DB_POOL_MAX);
  const close = async () => {
    await knex.destroy();
    await embedded?.stop();
  };
  try {
    if (options.migrate) await migrateToLatest(knex);
    if (embedded) {
      const report = await loadDemoRegistryIfEmpty(knex, config.DEMO_REGISTRY_FILE);
      if (report) logger.info({ file: config.DEMO_REGISTRY_FILE, ...report.counts }, 'demo registry loaded into the empty database');
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { knex, url: databaseUrl, embedded: embedded !== undefined, close };
}
