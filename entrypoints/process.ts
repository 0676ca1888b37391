import { pino, type Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config/config.ts';

/** Something a process entry point started and must stop on SIGTERM/SIGINT. */
export interface Stoppable {
  stop(): Promise<void>;
}

const EX_CONFIG = 78;

/**
 * Runs a process entry point: loads the config (a bad setting exits 78 naming it), starts the
 * process's part, and stops it gracefully on SIGTERM or SIGINT (exit 0), or exits 1 if start-up
 * or shutdown fails.
 */
export async function runProcess(name: string, startPart: (config: Config, logger: Logger) => Promise<Stoppable & { url?: string }>): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(EX_CONFIG);
    }
    throw error;
  }
  const logger = pino({ level: config.LOG_LEVEL, base: { process: name } });
  let running: Stoppable & { url?: string };
  try {
    running = await startPart(config, logger);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(EX_CONFIG);
    }
    logger.fatal({ err: error }, 'start-up failed');
    process.exit(1);
  }
  logger.info(running.url ? `ready: ${running.url}  (docs: ${running.url}/docs)` : 'ready');
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    running.stop().then(() => process.exit(0), (error: unknown) => {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
