import type { Knex } from 'knex';

/**
 * What Makers asked the relayer to sign for their ads (create, fund, withdraw, close), each
 * confirmed at most once by one transaction. `pool_amount` is what was ever deposited (the spec's
 * pool amount); `paid_out_amount` is what left the pool (withdrawals, the close payout, unlocks paid
 * to Bridgers). Withdrawals and closes hold their amount (`withdrawing_amount`) from the request
 * until they are confirmed or expire, so no trade can reserve liquidity that is on its way out:
 * available = pool - paid out - reserved - locked - withdrawing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE ads
      DROP CONSTRAINT ads_balances_non_negative,
      DROP COLUMN status,
      DROP COLUMN available_amount,
      ADD COLUMN paid_out_amount numeric(78,0) NOT NULL DEFAULT 0,
      ADD COLUMN withdrawing_amount numeric(78,0) NOT NULL DEFAULT 0`);
  await knex.raw(`
    ALTER TABLE ads
      ADD COLUMN available_amount numeric(78,0)
        GENERATED ALWAYS AS (pool_amount - paid_out_amount - reserved_amount - locked_amount - withdrawing_amount) STORED,
      ADD COLUMN status text GENERATED ALWAYS AS (
        CASE WHEN base_status IN ('ACTIVE', 'PAUSED')
              AND pool_amount - paid_out_amount - reserved_amount - locked_amount - withdrawing_amount = 0
             THEN 'EXHAUSTED' ELSE base_status END) STORED,
      ADD CONSTRAINT ads_balances_non_negative CHECK (
        pool_amount >= 0 AND paid_out_amount >= 0 AND reserved_amount >= 0 AND locked_amount >= 0 AND withdrawing_amount >= 0
        AND pool_amount - paid_out_amount - reserved_amount - locked_amount - withdrawing_amount >= 0)`);
  await knex.raw('CREATE INDEX ads_status_idx ON ads (status, created_at DESC, id DESC)');

  await knex.schema.createTable('ad_requests', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.uuid('ad_id').notNullable().references('ads.id').onDelete('CASCADE');
    t.text('action').notNullable().checkIn(['createAd', 'fundAd', 'withdrawFromAd', 'closeAd'], 'ad_requests_action_check');
    // createAd: initial amount; fundAd, withdrawFromAd: the amount; closeAd: null (the chain says how much left).
    t.decimal('amount', 78, 0);
    // createAd: the Maker's recipient on the order chain; withdrawFromAd, closeAd: the payout address.
    t.text('recipient');
    t.text('chain_id').notNullable();
    t.text('contract_address').notNullable();
    t.text('req_hash').notNullable().unique();
    t.text('auth_token').notNullable().unique();
    t.timestamp('deadline', { useTz: true }).notNullable();
    // What this request holds back from `available` until it is confirmed or expires.
    t.decimal('held_amount', 78, 0).notNullable().defaultTo(0);
    t.text('status').notNullable().defaultTo('PENDING').checkIn(['PENDING', 'CONFIRMED', 'EXPIRED'], 'ad_requests_status_check');
    t.text('tx_hash');
    t.timestamp('confirmed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // One transaction answers one request, whatever the ad.
    t.unique(['chain_id', 'tx_hash']);
    t.index(['ad_id', 'status']);
  });
  await knex.raw(`ALTER TABLE ad_requests ADD CONSTRAINT ad_requests_confirmed_has_tx CHECK ((status = 'CONFIRMED') = (tx_hash IS NOT NULL))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ad_requests');
  await knex.raw(`
    ALTER TABLE ads
      DROP CONSTRAINT ads_balances_non_negative,
      DROP COLUMN status,
      DROP COLUMN available_amount,
      DROP COLUMN paid_out_amount,
      DROP COLUMN withdrawing_amount`);
  await knex.raw(`
    ALTER TABLE ads
      ADD COLUMN available_amount numeric(78,0) GENERATED ALWAYS AS (pool_amount - reserved_amount - locked_amount) STORED,
      ADD COLUMN status text GENERATED ALWAYS AS (
        CASE WHEN base_status IN ('ACTIVE', 'PAUSED') AND pool_amount - reserved_amount - locked_amount = 0
             THEN 'EXHAUSTED' ELSE base_status END) STORED,
      ADD CONSTRAINT ads_balances_non_negative CHECK (
        pool_amount >= 0 AND reserved_amount >= 0 AND locked_amount >= 0
        AND pool_amount - reserved_amount - locked_amount >= 0)`);
  await knex.raw('CREATE INDEX ads_status_idx ON ads (status, created_at DESC, id DESC)');
}
