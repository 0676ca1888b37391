import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { PinoPretty } from 'pino-pretty';
import { redactLogLine } from '../api/middleware/redact.ts';
import type { Config } from '../config/config.ts';

/** A process's logger and, when it writes for a person, how to print plain lines beside it. */
export interface ProcessLogger {
  logger: Logger;
  /** Set when logs are pretty (a terminal): writes `lines` to stdout, in order with the log's own lines. */
  print?: (lines: string[]) => void;
}

/**
 * LOG_FORMAT resolved: `auto` is pretty only when stdout is a terminal, so a person running
 * `npm start` reads lines, while a container, a pipe or a test reading stdout still gets JSON.
 */
export function prettyLogs(format: Config['LOG_FORMAT'], stdoutIsTTY: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTTY);
}

/**
 * The options every process logger is built with: each line is scrubbed of a stream ticket's value
 * (`ticket=`) before it is written, whoever logged it.
 */
export function processLoggerOptions(options: LoggerOptions): LoggerOptions {
  return { ...options, hooks: { ...options.hooks, streamWrite: redactLogLine } };
}

/**
 * The logger of a process entry point (`name` goes in every JSON line as `process`). Pretty output is
 * pino-pretty as a synchronous stream in this thread, not a transport worker: a line logged just
 * before `process.exit` (start-up failed, stopped) is still written. Colours only on a terminal.
 */
export function createProcessLogger(
  config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>,
  name: string,
  stdoutIsTTY = process.stdout.isTTY === true,
  /** Where JSON lines go instead of stdout (a test reading them). */
  destination?: DestinationStream,
): ProcessLogger {
  if (!prettyLogs(config.LOG_FORMAT, stdoutIsTTY)) {
    const options = processLoggerOptions({ level: config.LOG_LEVEL, base: { process: name } });
    return { logger: destination ? pino(options, destination) : pino(options) };
  }
  // One synchronous stdout for the log and the printed lines, so they come out in the order written.
  const stdout = pino.destination({ dest: 1, sync: true });
  const stream = PinoPretty({ destination: stdout, colorize: stdoutIsTTY, singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
  return { logger: pino(processLoggerOptions({ level: config.LOG_LEVEL, base: {} }), stream), print: (lines) => stdout.write(`${lines.join('\n')}\n`) };
}
