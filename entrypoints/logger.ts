import { isSpanContextValid, trace } from '@opentelemetry/api';
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
 * (`ticket=`) before it is written, whoever logged it; a line written inside a traced span carries its
 * `trace_id` and `span_id`, so a log line leads to its trace and a trace to its lines.
 */
export function processLoggerOptions(options: LoggerOptions): LoggerOptions {
  return { ...options, mixin: traceFields, hooks: { ...options.hooks, streamWrite: redactLogLine } };
}

/** The active span's ids (W3C hex), or nothing when no span is active (tracing off, or outside any). */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
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
