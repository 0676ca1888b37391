import type { Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config/config.ts';
import type { ProcessRole } from '../config/roles.ts';
import { createProcessLogger } from './logger.ts';
import { renderStartupSummary, type StartupSummary } from './summary.ts';

/** Something a process entry point started and must stop on SIGTERM/SIGINT. */
export interface Stoppable {
  stop(): Promise<void>;
}

/** A started part: its URL when it serves one, and what a person should know once it is up. */
export type StartedPart = Stoppable & { url?: string; summary?: StartupSummary };

const EX_CONFIG = 78;
const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Runs a long-lived process entry point: loads the config of its role `name` (a bad setting exits 78 naming it), starts
 * the process's part, and on SIGTERM or SIGINT stops it gracefully (in-flight work drained by its
 * `stop`) and exits 0; exits 1 if start-up or shutdown fails. The signal handlers are in place before
 * start-up begins: a SIGTERM while the part is still starting (a rolling update, a scale-down) stops
 * it as soon as it is up, instead of killing it half-started. Logs are pretty on a terminal, JSON
 * lines elsewhere (LOG_FORMAT); once up, the part's start-up summary is printed for a person
 * (pretty) or carried in the `ready` line (JSON).
 */
export async function runProcess(name: ProcessRole, startPart: (config: Config, logger: Logger) => Promise<StartedPart>): Promise<void> {
  const config = loadConfigOrExit(name);
  const { logger, print } = createProcessLogger(config, name);
  const signalled = waitForStopSignal(logger);
  let running: StartedPart;
  try {
    running = await startPart(config, logger);
  } catch (error) {
    exitOnStartFailure(error, logger);
  }
  if (!signalled.received) announceReady(logger, running, print);
  await signalled.promise;
  running.stop().then(
    () => {
      logger.info('stopped');
      process.exit(0);
    },
    (error: unknown) => {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}

/**
 * Runs a one-shot process entry point (`migrate`): loads the config, runs `task` to its end and exits
 * 0, or 1 if it fails. A SIGTERM or SIGINT meanwhile does not cut it: the task (a migration runs in a
 * transaction) finishes, then the process exits as it would have, so an orchestrator stopping it
 * never leaves half a step behind.
 */
export async function runTask(name: ProcessRole, task: (config: Config, logger: Logger) => Promise<void>): Promise<void> {
  const config = loadConfigOrExit(name);
  const { logger } = createProcessLogger(config, name);
  const signalled = waitForStopSignal(logger, 'finishing the current step before exiting');
  try {
    await task(config, logger);
  } catch (error) {
    exitOnStartFailure(error, logger);
  }
  if (signalled.received) logger.info('stopped');
  process.exit(0);
}

/**
 * Says the part is up: `ready: <url>  (docs: <url>/docs)` (tests and scripts wait for that line).
 * With `print` (a terminal), the summary follows as plain lines; without it, the summary is a field
 * of the `ready` JSON line, for whatever reads the log.
 */
export function announceReady(logger: Pick<Logger, 'info'>, running: Pick<StartedPart, 'url' | 'summary'>, print?: (lines: string[]) => void): void {
  const message = running.url ? `ready: ${running.url}  (docs: ${running.url}/docs)` : 'ready';
  if (print && running.summary) {
    logger.info(message);
    print(renderStartupSummary(running.summary));
  } else if (running.summary) {
    logger.info({ summary: running.summary }, message);
  } else {
    logger.info(message);
  }
}

/** The configuration of a process of `role` (only the rules of the concerns it uses: config/roles.ts), or exit 78 naming what is wrong. */
function loadConfigOrExit(role: ProcessRole): Config {
  try {
    return loadConfig(undefined, role);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(EX_CONFIG);
    }
    throw error;
  }
}

function exitOnStartFailure(error: unknown, logger: Logger): never {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(EX_CONFIG);
  }
  logger.fatal({ err: error }, 'start-up failed');
  process.exit(1);
}

/**
 * Listens for the first SIGTERM or SIGINT. Only the first is handled: a second one finds no
 * handler, so outside a container (where Ctrl-C twice means "now") it kills the process at once.
 */
function waitForStopSignal(logger: Logger, note = 'shutting down'): { promise: Promise<void>; readonly received: boolean } {
  let received = false;
  const promise = new Promise<void>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      for (const other of STOP_SIGNALS) process.removeListener(other, onSignal);
      received = true;
      logger.info({ signal }, note);
      resolve();
    };
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  });
  return {
    promise,
    get received() {
      return received;
    },
  };
}
