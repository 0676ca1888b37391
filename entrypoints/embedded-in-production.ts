import { ConfigError, type Config } from '../config/config.ts';

/**
 * Refuses, in production, what `npm start` runs for a developer: the embedded PostgreSQL (no
 * DATABASE_URL) and the local devnets (DEVNET=on). Both live in DATA_DIR on this host, the devnets'
 * keys are public and the database is not backed up; a production process meant to reach its real
 * database and chains. ALLOW_EMBEDDED_IN_PRODUCTION=true lets a production-mode test run start them.
 * Throws a ConfigError (the process exits 78) naming what to set.
 */
export function refuseEmbeddedInProduction(config: Config): void {
  if (config.NODE_ENV !== 'production' || config.ALLOW_EMBEDDED_IN_PRODUCTION) return;
  if (!config.DATABASE_URL) {
    throw new ConfigError('DATABASE_URL is unset: production does not run the embedded PostgreSQL and local devnets of npm start; ' +
      'set DATABASE_URL to the production database (or ALLOW_EMBEDDED_IN_PRODUCTION=true for a production-mode test run)');
  }
  if (config.DEVNET === 'on') {
    throw new ConfigError('DEVNET=on: production does not run the local devnets; set DEVNET=off and register the real chains ' +
      '(or ALLOW_EMBEDDED_IN_PRODUCTION=true for a production-mode test run)');
  }
}
