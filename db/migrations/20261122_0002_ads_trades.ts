import type { Knex } from 'knex';

const AMOUNT = { precision: 78, scale: 0 } as const;

/**
 * Ads and trades. Balances are numeric(78,0) (a uint256 fits). `available_amount` and the shown
 * `status` are generated columns, so what a filter matches is always what a reader is shown:
 * an open ad with nothing available is EXHAUSTED, and becomes ACTIVE again when funded.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ads', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.text('creator_address').notNullable();
    t.text('creator_dst_address').notNullable();
    t.uuid('route_id').notNullable().references('routes.id').onDelete('RESTRICT');
    t.uuid('ad_token_id').notNullable().references('tokens.id');
    t.uuid('order_token_id').notNullable().references('tokens.id');
    // Public chain ids, copied from the route's tokens so chain filters use this table's indexes.
    t.text('ad_chain_id').notNullable();
    t.text('order_chain_id').notNullable();
    t.decimal('pool_amount', AMOUNT.precision, AMOUNT.scale).notNullable().defaultTo(0);
    t.decimal('reserved_amount', AMOUNT.precision, AMOUNT.scale).notNullable().defaultTo(0);
    t.decimal('locked_amount', AMOUNT.precision, AMOUNT.scale).notNullable().defaultTo(0);
    t.decimal('min_amount', AMOUNT.precision, AMOUNT.scale);
    t.decimal('max_amount', AMOUNT.precision, AMOUNT.scale);
    // What the Maker chose (or the lifecycle set); `status` below is what everyone sees.
    t.text('base_status').notNullable().defaultTo('PENDING').checkIn(['PENDING', 'ACTIVE', 'PAUSED', 'CLOSED'], 'ads_base_status_check');
    t.jsonb('metadata');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`
    ALTER TABLE ads
      ADD COLUMN available_amount numeric(78,0) GENERATED ALWAYS AS (pool_amount - reserved_amount - locked_amount) STORED,
      ADD COLUMN status text GENERATED ALWAYS AS (
        CASE WHEN base_status IN ('ACTIVE', 'PAUSED') AND pool_amount - reserved_amount - locked_amount = 0
             THEN 'EXHAUSTED' ELSE base_status END) STORED,
      ADD CONSTRAINT ads_balances_non_negative CHECK (
        pool_amount >= 0 AND reserved_amount >= 0 AND locked_amount >= 0
        AND pool_amount - reserved_amount - locked_amount >= 0),
      ADD CONSTRAINT ads_min_le_max CHECK (min_amount IS NULL OR max_amount IS NULL OR min_amount <= max_amount)`);
  // Lists are newest first with keyset pagination on (created_at, id); each filter has an index
  // that serves both the filter and that order, so a page is one index range scan.
  for (const column of [null, 'route_id', 'creator_address', 'ad_chain_id', 'order_chain_id', 'ad_token_id', 'order_token_id', 'status']) {
    const columns = column ? `${column}, created_at DESC, id DESC` : 'created_at DESC, id DESC';
    await knex.raw(`CREATE INDEX ads_${column ?? 'page'}_idx ON ads (${columns})`);
  }

  await knex.schema.createTable('trades', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.uuid('route_id').notNullable().references('routes.id');
    t.uuid('ad_id').notNullable().references('ads.id');
    t.text('ad_creator_address').notNullable();
    t.text('bridger_address').notNullable();
    t.text('bridger_dst_address').notNullable();
    t.text('ad_chain_id').notNullable();
    t.text('order_chain_id').notNullable();
    t.uuid('ad_token_id').notNullable().references('tokens.id');
    t.uuid('order_token_id').notNullable().references('tokens.id');
    t.decimal('amount', AMOUNT.precision, AMOUNT.scale).notNullable();
    t.text('status').notNullable().defaultTo('PENDING')
      .checkIn(['PENDING', 'DEPOSITED', 'LOCKED', 'SETTLED', 'EXPIRED'], 'trades_status_check');
    t.boolean('ad_creator_claimed').notNullable().defaultTo(false);
    t.boolean('bridger_claimed').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE trades ADD CONSTRAINT trades_amount_positive CHECK (amount > 0)`);
  for (const column of [null, 'route_id', 'ad_id', 'ad_creator_address', 'bridger_address', 'ad_token_id', 'order_token_id', 'amount']) {
    const columns = column ? `${column}, created_at DESC, id DESC` : 'created_at DESC, id DESC';
    await knex.raw(`CREATE INDEX trades_${column ?? 'page'}_idx ON trades (${columns})`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('trades');
  await knex.schema.dropTable('ads');
}
