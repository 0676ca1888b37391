import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailableError } from './unavailable.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/** Which errors the API answers 503 (retry later) rather than 500: PostgreSQL out of reach, not a refused statement. */
describe('isDatabaseUnavailableError', () => {
  it('takes the server going away, restarting or refusing connections as unavailable', () => {
    for (const error of [
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is shutting down', '57P03'),
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('sorry, too many clients already', '53300'),
      withCode('connection failure', '08006'),
      new Error('Connection terminated unexpectedly'),
      // knex puts the failed query before the driver's message (a chaos run answered 500 on these).
      new Error('select * from "trades" where "id" = $1 for update - Connection terminated unexpectedly'),
      new Error('update "trades" set "status" = $1 - Client has encountered a connection error and is not queryable'),
      new Error('Client was closed and is not queryable'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }),
      new Error('the transaction could not be rolled back', { cause: withCode('terminating connection due to administrator command', '57P01') }),
    ]) expect(isDatabaseUnavailableError(error), error.message).toBe(true);
  });

  it('takes a refused statement or a bug as what it is', () => {
    for (const error of [
      withCode('duplicate key value violates unique constraint', '23505'),
      withCode('syntax error at or near "FROM"', '42601'),
      new TypeError("Cannot read properties of undefined (reading 'rows')"),
      new Error('wrapped', { cause: withCode('duplicate key', '23505') }),
      new Error('select 1 - Connection terminated unexpectedly, said nobody'),
    ]) expect(isDatabaseUnavailableError(error), error.message).toBe(false);
    expect(isDatabaseUnavailableError('a string')).toBe(false);
  });
});
