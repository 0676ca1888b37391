import type { Knex } from 'knex';

/**
 * Bulk rows for query-plan tests and the API bench: `count` ads and as many trades spread over a
 * few routes, makers and statuses, inserted in one statement each by PostgreSQL itself. The trades
 * carry every column a real create writes, so a service started over them resumes them.
 * Returns the route ids used, for filters.
 */
export async function seedAdsAndTrades(knex: Knex, count: number): Promise<{ routeIds: string[]; adChainIds: string[] }> {
  const routes = await knex('routes')
    .join('tokens as a', 'a.id', 'routes.ad_token_id').join('chains as ac', 'ac.id', 'a.chain_id')
    .join('tokens as o', 'o.id', 'routes.order_token_id').join('chains as oc', 'oc.id', 'o.chain_id')
    .select('routes.id', 'routes.ad_token_id', 'routes.order_token_id', 'ac.chain_id as ad_chain_id', 'oc.chain_id as order_chain_id');
  if (routes.length === 0) throw new Error('seedAdsAndTrades needs at least one route');
  await knex.raw(`CREATE TEMP TABLE seed_routes (n int, id uuid, ad_token_id uuid, order_token_id uuid, ad_chain_id text, order_chain_id text)`);
  try {
    await knex('seed_routes').insert(routes.map((route, n) => ({ n, ...route })));
    await knex.raw(`
      INSERT INTO ads (creator_address, creator_dst_address, route_id, ad_token_id, order_token_id, ad_chain_id, order_chain_id,
                       pool_amount, locked_amount, min_amount, max_amount, base_status, metadata, created_at)
      SELECT '0x' || lpad(to_hex(i % 97), 40, '0'), '0x' || lpad(to_hex(i % 97), 40, '0'),
             r.id, r.ad_token_id, r.order_token_id, r.ad_chain_id, r.order_chain_id,
             (1000000 + i)::numeric * 1000000000000, CASE WHEN i % 10 = 0 THEN (1000000 + i)::numeric * 1000000000000 ELSE 0 END,
             1000, NULL, CASE WHEN i % 7 = 0 THEN 'PAUSED' WHEN i % 13 = 0 THEN 'CLOSED' ELSE 'ACTIVE' END,
             jsonb_build_object('name', 'seed ' || i), now() - make_interval(secs => i)
      FROM generate_series(1, ?) AS i JOIN seed_routes r ON r.n = i % ?`, [count, routes.length]);
    // Every column a real create writes (trades/use-cases/create-trade.ts): a service started over these rows
    // resumes the open ones (trades/resume.ts), which needs their deadlines. The deadlines are a
    // month away, so no timer fires during a bench; the order is well-formed but never on chain.
    await knex.raw(`
      INSERT INTO trades (route_id, ad_id, ad_creator_address, bridger_address, bridger_dst_address, ad_chain_id, order_chain_id,
                          ad_token_id, order_token_id, amount, status, created_at,
                          order_params, order_hash, secret, secret_commitment, reservation_expires_at, lock_deadline)
      SELECT a.route_id, a.id, a.creator_address, a.bridger, a.creator_address,
             a.ad_chain_id, a.order_chain_id, a.ad_token_id, a.order_token_id, (n * 1000)::numeric,
             (ARRAY['PENDING','DEPOSITED','LOCKED','SETTLED'])[n % 4 + 1], a.created_at,
             jsonb_build_object(
               'orderChainToken', '0x' || lpad('e1', 40, '0'), 'adChainToken', '0x' || lpad('e2', 40, '0'), 'amount', (n * 1000)::text,
               'orderAmount', (n * 1000)::text, 'adAmount', (n * 1000)::text,
               'bridger', a.bridger, 'orderRecipient', a.creator_address, 'adId', a.id::text, 'adCreator', a.creator_address,
               'adRecipient', a.bridger, 'salt', n::text, 'orderChainId', a.order_chain_id, 'orderPortal', '0x' || lpad('0a', 40, '0'),
               'adChainId', a.ad_chain_id, 'adManager', '0x' || lpad('0b', 40, '0'),
               'lockExpiry', extract(epoch FROM now() + interval '31 days')::bigint::text,
               'refundTime', extract(epoch FROM now() + interval '32 days')::bigint::text),
             '0x' || md5('order ' || a.id) || md5('hash ' || a.id), n::text, (n + 1)::text,
             now() + interval '30 days', now() + interval '30 days'
      FROM (SELECT ads.*, row_number() OVER () AS n, '0x' || lpad(to_hex(row_number() OVER () % 53 + 1000), 40, '0') AS bridger FROM ads) a`);
    await knex.raw('ANALYZE ads; ANALYZE trades');
  } finally {
    await knex.raw('DROP TABLE IF EXISTS seed_routes');
  }
  return { routeIds: routes.map((r) => r.id), adChainIds: [...new Set(routes.map((r) => r.ad_chain_id as string))] };
}
