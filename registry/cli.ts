import { readFileSync } from 'node:fs';
import { loadConfig } from '../config/config.ts';
import { embeddedDatabaseUrl, startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest, ping } from '../db/knex.ts';
import path from 'node:path';
import { RegistryFileError } from './file.ts';
import { importRegistry } from './import.ts';

const USAGE = 'usage: npm run registry -- import FILE';

/**
 * The operators' admin interface to the registry (there is no admin HTTP endpoint):
 * `npm run registry -- import FILE` validates the file and upserts it into DATABASE_URL (or the
 * embedded database when unset), printing what changed. Exit 0 on success, 1 on an invalid
 * file, 2 on usage errors.
 */
async function main(argv: string[]): Promise<number> {
  const [command, file] = argv;
  if (command !== 'import' || !file) {
    console.error(USAGE);
    return 2;
  }
  let input: unknown;
  try {
    input = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    console.error(`cannot read ${file} as JSON: ${(error as Error).message}`);
    return 1;
  }
  const config = loadConfig();
  // With no DATABASE_URL: the embedded database of a running `npm start` if it answers,
  // else start it here (the same data directory, so the service sees the import later).
  let url = config.DATABASE_URL;
  let embedded: EmbeddedDatabase | undefined;
  const dataDir = path.join(config.DATA_DIR, 'pg');
  const running = url ? undefined : embeddedDatabaseUrl(dataDir, config.EMBEDDED_PG_PORT);
  if (running && (await answers(running))) url = running;
  if (!url) {
    embedded = await startEmbeddedDatabase({ dataDir, port: config.EMBEDDED_PG_PORT, persistent: true });
    url = embedded.url;
  }
  const knex = createKnex(url, 2);
  try {
    await migrateToLatest(knex);
    const report = await importRegistry(knex, input);
    for (const line of report.changes) console.log(line);
    for (const [kind, counts] of Object.entries(report.counts)) {
      console.log(`${kind}: ${counts.created} created, ${counts.updated} updated, ${counts.unchanged} unchanged`);
    }
    return 0;
  } catch (error) {
    if (error instanceof RegistryFileError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await knex.destroy();
    await embedded?.stop();
  }
}

async function answers(url: string): Promise<boolean> {
  const probe = createKnex(url, 1);
  try {
    await ping(probe);
    return true;
  } catch {
    return false;
  } finally {
    await probe.destroy();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (error) => {
  console.error(error);
  process.exit(1);
});
