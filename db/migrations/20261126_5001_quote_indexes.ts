import type { Knex } from 'knex';

/**
 * GET /v1/quotes: the quote reads one route's ACTIVE ads that can cover an amount, most
 * available first (oldest first on a tie), and counts each candidate's unfunded reservations.
 * - `ads_quote_idx` serves that filter and that order, so a quote is one index range scan that stops
 *   at its limit, however many ads the route has; partial, so it holds ACTIVE ads only.
 * - `trades_unfunded_ad_idx`: an ad's open unfunded reservations (PENDING, not run out) without
 *   reading its settled trades; what MAX_OPEN_RESERVATIONS_PER_AD counts.
 * Expand only: the previous release ignores both.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX ads_quote_idx ON ads (route_id, available_amount DESC, created_at, id) WHERE status = 'ACTIVE'`);
  await knex.raw(`CREATE INDEX trades_unfunded_ad_idx ON trades (ad_id, reservation_expires_at) WHERE status = 'PENDING'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX trades_unfunded_ad_idx');
  await knex.raw('DROP INDEX ads_quote_idx');
}
