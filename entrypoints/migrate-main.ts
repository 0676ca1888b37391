import { ConfigError } from '../config/config.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { runTask } from './process.ts';

// `npm run migrate`: brings DATABASE_URL's schema up to date, then exits (a SIGTERM meanwhile lets
// the running migration finish first: each runs in a transaction).
void runTask('migrate', async (config, logger) => {
  if (!config.DATABASE_URL) throw new ConfigError('DATABASE_URL is required for migrate (npm start migrates its embedded database itself)');
  // The Job holds no signing, SEP-10 or JWT key: production refuses one given to it.
  resolveSecrets(config, 'migrate');
  const knex = createKnex(config.DATABASE_URL, 1);
  try {
    await migrateToLatest(knex);
    logger.info('schema is up to date');
  } finally {
    await knex.destroy();
  }
});
