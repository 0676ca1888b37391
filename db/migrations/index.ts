import type { Knex } from 'knex';
import * as registry from './20261122_0001_registry.ts';
import * as adsTrades from './20261122_0002_ads_trades.ts';
import * as auth from './20261122_0003_auth.ts';
import * as merkle from './20261122_0004_merkle.ts';
import * as adRequests from './20261123_0001_ad_requests.ts';
import * as chainEvents from './20261123_0002_chain_events.ts';
import * as tradeLifecycle from './20261123_0003_trade_lifecycle.ts';
import * as sessionLifetime from './20261123_1001_session_lifetime.ts';
import * as rateLimits from './20261123_1002_rate_limits.ts';
import * as pushedEvents from './20261124_2001_pushed_events.ts';
import * as webhookLease from './20261124_2002_webhook_lease.ts';
import * as tradeStarts from './20261124_2401_trade_starts.ts';
import * as requestBatches from './20261124_3001_request_batches.ts';
import * as routePricing from './20261124_4001_route_pricing.ts';
import * as idempotencyKeys from './20261126_2901_idempotency_keys.ts';
import * as tradeTransactions from './20261126_2902_trade_transactions.ts';
import * as auditCursors from './20261126_3301_audit_cursors.ts';
import * as quoteIndexes from './20261126_5001_quote_indexes.ts';
import * as retention from './20261126_5101_retention.ts';
import * as eventStreamTickets from './20261126_5201_event_stream_tickets.ts';
import * as chainPublicRpcUrl from './20261127_2901_chain_public_rpc_url.ts';
import * as chainRpcProviders from './20261129_4101_chain_rpc_providers.ts';
import * as tradeFollowUps from './20261127_3410_trade_follow_ups.ts';
import * as operatorControls from './20261129_4301_operator_controls.ts';
import * as tradeDepositRequests from './20261129_4401_trade_deposit_requests.ts';
import * as keeperOutbox from './20261129_5901_keeper_outbox.ts';
import * as keeperOwed from './20261129_5902_keeper_owed.ts';
import * as sessionChanges from './20261129_6101_session_changes.ts';

/**
 * Every migration, in order. Listed explicitly (not read from the folder) so the same list runs
 * under tsx, vitest and any bundler. A new migration is a new file plus one line here.
 */
const migrations: Record<string, Knex.Migration> = {
  '20261122_0001_registry': registry,
  '20261122_0002_ads_trades': adsTrades,
  '20261122_0003_auth': auth,
  '20261122_0004_merkle': merkle,
  '20261123_0001_ad_requests': adRequests,
  '20261123_0002_chain_events': chainEvents,
  '20261123_0003_trade_lifecycle': tradeLifecycle,
  '20261123_1001_session_lifetime': sessionLifetime,
  '20261123_1002_rate_limits': rateLimits,
  '20261124_2001_pushed_events': pushedEvents,
  '20261124_2002_webhook_lease': webhookLease,
  '20261124_2401_trade_starts': tradeStarts,
  '20261124_3001_request_batches': requestBatches,
  '20261124_4001_route_pricing': routePricing,
  '20261126_2901_idempotency_keys': idempotencyKeys,
  '20261126_2902_trade_transactions': tradeTransactions,
  '20261126_3301_audit_cursors': auditCursors,
  '20261126_5001_quote_indexes': quoteIndexes,
  '20261126_5101_retention': retention,
  '20261126_5201_event_stream_tickets': eventStreamTickets,
  '20261127_2901_chain_public_rpc_url': chainPublicRpcUrl,
  '20261127_3410_trade_follow_ups': tradeFollowUps,
  '20261129_4101_chain_rpc_providers': chainRpcProviders,
  '20261129_4301_operator_controls': operatorControls,
  '20261129_4401_trade_deposit_requests': tradeDepositRequests,
  '20261129_5901_keeper_outbox': keeperOutbox,
  '20261129_5902_keeper_owed': keeperOwed,
  '20261129_6101_session_changes': sessionChanges,
};

/**
 * How long a migration may wait for a table lock, and run one statement. A migration that waits
 * behind a long transaction on a hot table (an ALTER wants ACCESS EXCLUSIVE, CREATE INDEX wants
 * SHARE) holds every later query on that table in the lock queue behind it: the service stalls.
 * With `lock_timeout` it fails fast instead, its transaction rolls back, and `npm run migrate` is
 * run again (db/README "Rollouts"). `statement_timeout` bounds a backfill that grew with the table.
 */
export const MIGRATION_TIMEOUTS = { lockTimeout: '5s', statementTimeout: '10min' } as const;

/** Runs `step` with the timeouts set for its transaction only (knex runs each migration in its own transaction). */
function bounded(step: (knex: Knex) => PromiseLike<unknown>): (knex: Knex) => Promise<void> {
  return async (knex) => {
    await knex.raw(`SET LOCAL lock_timeout = '${MIGRATION_TIMEOUTS.lockTimeout}'`);
    await knex.raw(`SET LOCAL statement_timeout = '${MIGRATION_TIMEOUTS.statementTimeout}'`);
    await step(knex);
  };
}

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const migration = migrations[name]!;
    return { up: bounded(migration.up), ...(migration.down ? { down: bounded(migration.down) } : {}) };
  },
};
