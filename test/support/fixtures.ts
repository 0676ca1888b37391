import type { Knex } from 'knex';

/**
 * Rows inserted directly, for read-API tests that need data before the write endpoints exist.
 * Every helper returns the inserted row's id (and what later inserts need).
 */
let counter = 0;
const next = () => ++counter;

export async function insertChain(knex: Knex, over: Partial<Record<string, unknown>> = {}) {
  const n = next();
  const [row] = await knex('chains').insert({
    name: `Chain ${n}`,
    chain_id: String(100000 + n),
    kind: 'EVM',
    ad_manager_address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    order_portal_address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
    ...over,
  }).returning(['id', 'chain_id']);
  return { id: row.id as string, chainId: row.chain_id as string };
}

export async function insertToken(knex: Knex, chainUuid: string, over: Partial<Record<string, unknown>> = {}) {
  const n = next();
  const [row] = await knex('tokens').insert({
    chain_id: chainUuid,
    symbol: `T${n}`,
    name: `Token ${n}`,
    address: `0x${n.toString(16).padStart(40, '0')}`,
    decimals: 18,
    kind: 'ERC20',
    // One asset for every fixture token unless a test says otherwise: fixture routes price 1:1.
    asset: 'TEST',
    ...over,
  }).returning('id');
  return row.id as string;
}

export async function insertRoute(knex: Knex, adTokenId: string, orderTokenId: string, metadata: object = {}) {
  const [row] = await knex('routes').insert({ ad_token_id: adTokenId, order_token_id: orderTokenId, metadata }).returning('id');
  return row.id as string;
}

/** A route between two fresh chains, with everything an ad or trade row needs. */
export async function insertRouteWithChains(knex: Knex) {
  const adChain = await insertChain(knex);
  const orderChain = await insertChain(knex);
  const adTokenId = await insertToken(knex, adChain.id);
  const orderTokenId = await insertToken(knex, orderChain.id);
  const routeId = await insertRoute(knex, adTokenId, orderTokenId);
  return { routeId, adTokenId, orderTokenId, adChainId: adChain.chainId, orderChainId: orderChain.chainId };
}

export type RouteFixture = Awaited<ReturnType<typeof insertRouteWithChains>>;

export async function insertAd(knex: Knex, route: RouteFixture, over: Partial<Record<string, unknown>> = {}) {
  const [row] = await knex('ads').insert({
    creator_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    creator_dst_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    route_id: route.routeId,
    ad_token_id: route.adTokenId,
    order_token_id: route.orderTokenId,
    ad_chain_id: route.adChainId,
    order_chain_id: route.orderChainId,
    pool_amount: '1000',
    base_status: 'ACTIVE',
    ...over,
  }).returning('id');
  return row.id as string;
}

export async function insertTrade(knex: Knex, route: RouteFixture, adId: string, over: Partial<Record<string, unknown>> = {}) {
  const [row] = await knex('trades').insert({
    route_id: route.routeId,
    ad_id: adId,
    ad_creator_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    bridger_address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    bridger_dst_address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    ad_chain_id: route.adChainId,
    order_chain_id: route.orderChainId,
    ad_token_id: route.adTokenId,
    order_token_id: route.orderTokenId,
    amount: '100',
    ...over,
  }).returning('id');
  return row.id as string;
}
