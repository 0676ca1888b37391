import type { Knex } from 'knex';
import { Gauge, type Registry } from 'prom-client';
import { ping } from '../db/knex.ts';

/** A running probe of the process's database; `stop` ends it. */
export interface DatabaseUpProbe {
  /** One probe now (tests call it); resolves with what it set. */
  probe(): Promise<0 | 1>;
  stop(): void;
}

/**
 * `relayer_db_up` (1 or 0): whether this process's PostgreSQL answered `select 1` within
 * `timeoutMs`, probed every `intervalMs` (never at scrape time: a scrape must answer while the
 * database does not). Every process has it, so a dashboard tells "the database is out" from "this
 * pod cannot reach it"; 0 until the first probe answers.
 */
export function databaseUpProbe(registry: Registry, knex: Knex, options: { intervalMs: number; timeoutMs: number }): DatabaseUpProbe {
  const up = new Gauge({
    name: 'relayer_db_up',
    help: "1 when this process's PostgreSQL answered its last probe (every METRICS_SAMPLE_SECONDS), else 0",
    registers: [registry],
  });
  let pending: Promise<0 | 1> | undefined;
  const probe = () => (pending ??= (async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([ping(knex), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), options.timeoutMs); })]);
      up.set(1);
      return 1 as const;
    } catch {
      up.set(0);
      return 0 as const;
    } finally {
      clearTimeout(timer);
      pending = undefined;
    }
  })());
  void probe();
  const interval = setInterval(() => void probe(), options.intervalMs).unref();
  return {
    probe,
    stop: () => clearInterval(interval),
  };
}
