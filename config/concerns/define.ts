import { z } from 'zod';

/** An integer setting read from the environment's text, within [min, max]. */
export const intFromEnv = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A `true`/`false` setting, as a boolean. */
export const booleanFromEnv = (fallback: 'true' | 'false') =>
  z.enum(['true', 'false'], { error: 'must be true or false' }).default(fallback).transform((value) => value === 'true');

/** A 5-field cron expression (UTC), or `off`. */
export const cronOrOff = (fallback: string) =>
  z.string().regex(/^off$|^(\S+\s+){4}\S+$/, "must be a 5-field cron expression or 'off'").default(fallback);

/** An ISO 8601 time with its offset (2026-12-01T12:00:00Z), as Unix milliseconds. */
export const isoTime = z
  .string()
  .refine((value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)), {
    message: 'must be an ISO 8601 time with its offset, e.g. 2026-12-01T12:00:00Z',
  })
  .transform((value) => Date.parse(value));

/** Whether the run is production: what every concern's production rules read. */
export interface RunMode {
  NODE_ENV: 'development' | 'test' | 'production';
}

/**
 * One concern's settings: their schema (every key documented with its default) and the rules that
 * hold across them (settings that go together, what production demands). A process checks the
 * rules only of the concerns its role uses (config/roles.ts); every process reads every setting's
 * type and range, so a malformed value anywhere still stops start-up naming it.
 */
export interface ConfigConcern<Shape extends z.ZodRawShape = z.ZodRawShape, Reads = unknown> {
  /** What the settings are for, as docs/configuration.md "Settings per process" names them. */
  name: string;
  schema: z.ZodObject<Shape>;
  /**
   * Adds an issue (its path: the setting) for each rule broken. `config` holds this concern's
   * settings, NODE_ENV, and `Reads`: the settings of other concerns a rule looks at.
   */
  check?(config: z.output<z.ZodObject<Shape>> & RunMode & Reads, ctx: z.RefinementCtx): void;
}

/** A concern, typed by its schema (and `Reads`, what its rules read of other concerns). */
export function defineConcern<Shape extends z.ZodRawShape, Reads = unknown>(concern: ConfigConcern<Shape, Reads>): ConfigConcern<Shape, Reads> {
  return concern;
}

/**
 * True when `value` (a host, host:port or URL) names this machine: localhost and *.localhost,
 * 127.0.0.0/8, 0.0.0.0, ::1 and ::.
 */
export function isLoopbackHost(value: string): boolean {
  let host: string;
  try {
    host = (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? new URL(value) : new URL(`http://${value}`)).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '0.0.0.0'
    || host === '::1' || host === '::' || host === '0:0:0:0:0:0:0:1';
}
