import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config.ts';
import { start } from './server.ts';

/** `npm start`: the whole service on embedded defaults (or whatever the environment configures). */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const logger = pino({ level: config.LOG_LEVEL });
  let service;
  try {
    service = await start(config, logger);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78);
    }
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }
  logger.info(`ready: ${service.url}  (docs: ${service.url}/docs)`);
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    service.stop().then(() => process.exit(0), (error) => {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

void main();
