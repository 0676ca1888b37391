import type { Knex } from 'knex';

/**
 * Amounts across chains: an order carries its amount on each
 * chain in that chain's smallest unit, and the route says how they relate.
 * - `tokens.asset`: what the token stands for (e.g. `USD`, `ETH`). Two tokens of the same asset
 *   convert by their decimals. Existing tokens get their symbol: tokens of different symbols are
 *   then different assets, and a route between them takes no trades until a rate is stated.
 * - `routes.rate_order_units` / `routes.rate_ad_units`: a stated rate, `rate_order_units` base units
 *   of the order token are worth `rate_ad_units` base units of the ad token. Both or neither.
 * - Stored orders get `orderAmount` and `adAmount`: every order before this moved `amount` on both
 *   chains (1:1 in base units), so both are `amount`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tokens', (t) => {
    t.string('asset', 32);
  });
  await knex.raw('UPDATE tokens SET asset = upper(symbol)');
  await knex.schema.alterTable('routes', (t) => {
    t.decimal('rate_order_units', 78, 0);
    t.decimal('rate_ad_units', 78, 0);
  });
  // Written so that no NULL makes it pass: both or neither, and both positive.
  await knex.raw(`ALTER TABLE routes ADD CONSTRAINT routes_rate_check CHECK (
    (rate_order_units IS NULL) = (rate_ad_units IS NULL) AND coalesce(rate_order_units > 0 AND rate_ad_units > 0, true))`);
  await knex.raw(`UPDATE trades SET order_params = order_params
    || jsonb_build_object('orderAmount', order_params->>'amount', 'adAmount', order_params->>'amount')
    WHERE order_params IS NOT NULL AND order_params->>'adAmount' IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE trades SET order_params = order_params - 'orderAmount' - 'adAmount' WHERE order_params IS NOT NULL`);
  await knex.raw('ALTER TABLE routes DROP CONSTRAINT routes_rate_check');
  await knex.schema.alterTable('routes', (t) => {
    t.dropColumn('rate_order_units');
    t.dropColumn('rate_ad_units');
  });
  await knex.schema.alterTable('tokens', (t) => {
    t.dropColumn('asset');
  });
}
