import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { Knex } from 'knex';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors.ts';

/** The table the shared counters live in (migration 20261123_1002_rate_limits). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * An express-rate-limit store whose counters live in PostgreSQL, through rate-limiter-flexible's
 * maintained Postgres limiter (one atomic upsert per hit, fixed window): every API replica over the
 * same database counts against one budget. Built over the process's knex pool, so it adds no
 * connections of its own. `prefix` keeps budgets apart in the one table.
 */
export class PostgresRateLimitStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private readonly knex: Knex;
  private limiter: RateLimiterPostgres | undefined;

  constructor(knex: Knex, prefix: string) {
    this.knex = knex;
    this.prefix = prefix;
  }

  init(options: Options): void {
    this.limiter = new RateLimiterPostgres({
      storeClient: this.knex,
      storeType: 'knex',
      tableName: RATE_LIMIT_TABLE,
      // The migration owns the table; expired rows go with the scheduled purge (auth/purge.ts).
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: this.prefix,
      // The middleware decides what is over the limit; the store only counts.
      points: Number.MAX_SAFE_INTEGER,
      duration: options.windowMs / 1000,
    });
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return info(await this.run(() => this.counter().penalty(key, 1)));
  }

  async decrement(key: string): Promise<void> {
    await this.run(() => this.counter().reward(key, 1));
  }

  async resetKey(key: string): Promise<void> {
    await this.run(() => this.counter().delete(key));
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const res = await this.run(() => this.counter().get(key));
    return res ? info(res) : undefined;
  }

  private counter(): RateLimiterPostgres {
    if (!this.limiter) throw new Error('PostgresRateLimitStore used before init');
    return this.limiter;
  }

  /** A database that does not answer means the budget cannot be checked: 503, never a silent pass. */
  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw new AppError(503, 'rate limit counters are unavailable; retry later', { cause: error, code: 'DATABASE_UNAVAILABLE' });
    }
  }
}

function info(res: RateLimiterRes): ClientRateLimitInfo {
  return { totalHits: res.consumedPoints, resetTime: res.msBeforeNext >= 0 ? new Date(Date.now() + res.msBeforeNext) : undefined };
}
