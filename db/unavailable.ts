/**
 * Whether an error means PostgreSQL could not be reached or dropped the connection (down,
 * restarting, failing over, out of connections), rather than refusing the statement: the caller
 * may retry the same request later unchanged. The API answers these 503, never 500.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // An error raised because of another (pg-pool wraps its connect timeout, knex its failed rollback).
  if (error.cause !== undefined && error.cause !== error && isDatabaseUnavailableError(error.cause)) return true;
  // knex: no pooled connection could be acquired in time.
  if (error.name === 'KnexTimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // The socket (Node's codes), SQLSTATE class 08 (connection exception), 57P01-57P03
    // (shutdown, crash, not yet accepting), 53300 (too many connections).
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300'].includes(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  // node-postgres on a connection that ended under a query or was closed before it, and pg-pool's
  // and node-postgres's connect timeouts. These carry no code, and knex prefixes the failed query
  // to the message ("select ... - Connection terminated unexpectedly"), so the driver's text is
  // matched whole or after that prefix.
  return CONNECTION_LOST.some((text) => error.message === text || error.message.endsWith(` - ${text}`));
}

const CONNECTION_LOST = [
  'Connection terminated', 'Connection terminated unexpectedly', 'Connection terminated due to connection timeout',
  'Client has encountered a connection error and is not queryable', 'Client was closed and is not queryable',
  'timeout exceeded when trying to connect', 'timeout expired',
];
