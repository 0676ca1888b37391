import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainStateReader } from '../../chains/state.ts';
import { AD_CHAIN, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { startScene, type Scene } from '../support/scene.ts';
import { call, loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * Issue 33, finding 3: the books audit cannot be starved by PENDING ad requests. The audit expires
 * a lapsed request the chain says never ran (its hold given back); a flood of thousands of
 * unconfirmed requests leaves a run bounded (each phase within its own budget, reads in parallel,
 * a cursor for the next run), and the trades and ad balances are still audited in that run; one
 * user cannot make more than MAX_PENDING_ADS_PER_USER pending ads, nor more than
 * MAX_OPEN_AD_REQUESTS_PER_USER open requests, even all at once. Real PostgreSQL, the anvil
 * devnet; the chain reads of the flood run are slowed to 25 ms each, the latency the attack measured.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
const GRACE = 900;
const TTL = 600;
const FLOOD = 3000;
const BUDGET = { items: 500, seconds: 10, concurrency: 8 };

let scene: Scene;
let service: TestService;
let devnet: DevnetClient;
let makerToken: string;
let bridgerToken: string;
let routeId: string;

const books = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;
const metrics = async () => service.container.metrics.metrics();
/** Moves a request's deadline back past deadline + grace, as if it had been signed an hour ago and never sent. */
const lapse = (requestId: string) => service.knex('ad_requests').where({ id: requestId }).update({ deadline: new Date(Date.now() - (GRACE + 60) * 1000) });
const requestOf = async (adId: string, action: string) => service.knex('ad_requests').where({ ad_id: adId, action }).orderBy('created_at', 'desc').first('id', 'status');

async function activeAd(amount: bigint): Promise<string> {
  const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: amount.toString() }, makerToken);
  expect(created.status).toBe(200);
  await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', amount);
  const txHash = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
  expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
  return created.body.adId;
}

/**
 * The container's chain reader answering as a remote RPC would, 25 ms a call (the figure the attack
 * measured), counting the calls; every answer still comes from anvil. Restored by the returned function.
 */
function slowChain(reader: ChainStateReader, delayMs: number): { calls: () => number; restore: () => void } {
  const original = { ...reader };
  let calls = 0;
  for (const name of Object.keys(original) as (keyof ChainStateReader)[]) {
    (reader as any)[name] = async (...args: unknown[]) => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      return (original[name] as (...a: unknown[]) => Promise<unknown>)(...args);
    };
  }
  return { calls: () => calls, restore: () => Object.assign(reader, original) };
}

beforeAll(async () => {
  scene = await startScene({
    env: {
      SIGNED_REQUEST_TTL_SECONDS: String(TTL), CONFIRM_GRACE_SECONDS: String(GRACE),
      BOOKS_AUDIT_PHASE_MAX_ITEMS: String(BUDGET.items), BOOKS_AUDIT_PHASE_SECONDS: String(BUDGET.seconds),
      BOOKS_AUDIT_READ_CONCURRENCY: String(BUDGET.concurrency),
      // The defaults, spelled out: what the last tests show refused.
      MAX_PENDING_ADS_PER_USER: '20', MAX_OPEN_AD_REQUESTS_PER_USER: '50',
    },
  });
  ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

describe('the books audit settles what nobody acts on', () => {
  it('expires a lapsed request the chain says never ran and gives its hold back, as the ad\'s own path would', async () => {
    const adId = await activeAd(500n);
    // A withdraw signed and never sent: its 200 is held from the available balance.
    expect((await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '200', to: maker.address }, makerToken)).status).toBe(200);
    expect(await books(adId)).toMatchObject({ poolAmount: '500', availableAmount: '300' });
    // A create signed and never sent: a PENDING ad nobody will ever act on again.
    const abandoned = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '10' }, makerToken);
    const withdraw = (await requestOf(adId, 'withdrawFromAd'))!;
    const create = (await requestOf(abandoned.body.adId, 'createAd'))!;
    await lapse(withdraw.id);
    await lapse(create.id);

    const report = await service.container.runAudit();

    expect(report.drifts).toEqual([]);
    expect(report.expired.sort()).toEqual([withdraw.id, create.id].sort());
    expect(await requestOf(adId, 'withdrawFromAd')).toEqual({ id: withdraw.id, status: 'EXPIRED' });
    expect(await requestOf(abandoned.body.adId, 'createAd')).toEqual({ id: create.id, status: 'EXPIRED' });
    expect(await books(adId)).toMatchObject({ poolAmount: '500', availableAmount: '500' });
    expect(await metrics()).toMatch(/relayer_audit_requests_expired_total 2/);
    // Settled: the next run does not read them again, and the books still agree with the chain.
    const next = await service.container.runAudit();
    expect(next).toMatchObject({ drifts: [], expired: [] });
    expect(await books(adId)).toMatchObject({ availableAmount: '500' });
  }, 120_000);
});

describe('a flood of PENDING ad requests', () => {
  it(`leaves the next audit run bounded, with its trades and ad balances still audited (${FLOOD} requests)`, async () => {
    // What the run must still find: a drift planted in an ad's books, and a deposit on chain nobody confirmed.
    const drifted = await activeAd(300n);
    await service.knex('ads').where({ id: drifted }).increment('pool_amount', 7);
    const traded = await activeAd(1000n);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const opened = await call(service, 'POST', '/v1/trades/create', { adId: traded, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(opened.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.body;
    await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });

    // The flood: create requests of thousands of PENDING ads (as many sign-ins would make them,
    // written straight into the tables, in bulk), half of them already past deadline and grace.
    const route = (await service.container.registryCache.route(routeId))!;
    const adManager = service.devnet!.deployments[AD_CHAIN]!.adManager;
    const inserted = Date.now();
    const ads = Array.from({ length: FLOOD }, () => ({
      id: randomUUID(), creator_address: newEvmAccount().address, creator_dst_address: maker.address, route_id: routeId,
      ad_token_id: route.adToken.id, order_token_id: route.orderToken.id, ad_chain_id: AD_CHAIN, order_chain_id: ORDER_CHAIN,
    }));
    await service.knex.batchInsert('ads', ads, 500);
    await service.knex.batchInsert('ad_requests', ads.map((ad, i) => ({
      ad_id: ad.id, action: 'createAd', amount: '1000', recipient: maker.address, chain_id: AD_CHAIN, contract_address: adManager,
      req_hash: `0x${randomBytes(32).toString('hex')}`, auth_token: `0x${randomBytes(32).toString('hex')}`,
      deadline: new Date(i % 2 === 0 ? Date.now() + TTL * 1000 : Date.now() - (GRACE + 60) * 1000), held_amount: '0',
    })), 500);
    console.log(`flood of ${FLOOD} requests written in ${Date.now() - inserted} ms`);

    const slow = slowChain(service.container.chainState, 25);
    let report;
    let elapsed: number;
    try {
      const started = Date.now();
      report = await service.container.runAudit();
      elapsed = Date.now() - started;
    } finally {
      slow.restore();
    }
    console.log(`audit run over ${FLOOD} flood requests: ${elapsed} ms, ${slow.calls()} chain reads, phases ${JSON.stringify(report.phases)}, expired ${report.expired?.length}`);

    // Bounded: the requests phase read its budget and no more; the run took seconds, not the
    // ~75 s (3,000 reads x 25 ms, one after the other) today's audit needs before it looks at trades.
    expect(report.phases.requests).toMatchObject({ checked: BUDGET.items, truncated: true });
    expect(report.phases.requests.left).toBeGreaterThanOrEqual(FLOOD - BUDGET.items);
    expect(slow.calls()).toBeLessThan(BUDGET.items + 50);
    expect(elapsed).toBeLessThan(15_000);
    // Lapsed ones the chain says never ran are expired on the way.
    expect(report.expired.length).toBeGreaterThan(BUDGET.items / 4);
    // The other phases ran whole in the same run: the unreported deposit applied, the planted drift found.
    expect(report.phases.trades).toMatchObject({ truncated: false, left: 0 });
    expect(report.phases['ad-balances']).toMatchObject({ truncated: false, left: 0 });
    expect(report.repairs).toContainEqual({ kind: 'trade', subject: tradeId, txHash: expect.any(String) });
    expect((await call(service, 'GET', `/v1/trades/${tradeId}`)).body).toMatchObject({ status: 'DEPOSITED' });
    expect(report.drifts).toEqual([{ kind: 'ad-balance', subject: drifted, detail: expect.stringMatching(/available 300, locked 0; books: in the contract 307/) }]);
    // The metrics say the requests sweep is behind and by how much (the BooksAuditFallingBehind alert's inputs).
    const scraped = await metrics();
    expect(scraped).toMatch(new RegExp(`relayer_audit_items_left\\{phase="requests"\\} ${report.phases.requests.left}\\b`));
    expect(scraped).toMatch(/relayer_audit_items_left\{phase="trades"\} 0/);
    expect(scraped).toMatch(/relayer_audit_truncated_total\{phase="requests"\} 1/);

    // The next run continues where this one stopped (its cursor), not from the first page again
    // (how far it gets within its budget depends on the machine's load: the trade's proof is being made).
    const second = await service.container.runAudit();
    expect(second.phases.requests.checked).toBeGreaterThan(0);
    expect(second.phases.requests.left).toBe(report.phases.requests.left - second.phases.requests.checked);
    expect(second.expired.filter((id) => report.expired.includes(id))).toEqual([]);
  }, 300_000);
});

describe('per-user limits on ad requests', () => {
  it('refuses a user\'s 21st pending ad with 429 naming MAX_PENDING_ADS_PER_USER, also when all are asked at once', async () => {
    const account = newEvmAccount();
    const token = (await loginEvm(service, account)).body.tokens.access;
    const body = JSON.stringify({ routeId, creatorDstAddress: account.address, fundAmount: '1000' });
    const responses = await Promise.all(Array.from({ length: 25 }, () => service.request('/v1/ads/create', {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body,
    })));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(20).fill(200), ...Array(5).fill(429)]);
    const refused = responses.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(TTL);
    expect(await refused.json()).toEqual({
      statusCode: 429, error: 'Too Many Requests', code: 'AD_REQUEST_LIMIT', retryable: true,
      message: expect.stringMatching(/^too many pending ads: 20 of yours await their create confirmation \(MAX_PENDING_ADS_PER_USER is 20\)/),
    });
    // Nothing was recorded for the refused ones.
    expect(Number((await service.knex('ads').where({ creator_address: account.address }).count({ n: '*' }).first())!.n)).toBe(20);
    const listed = await call(service, 'GET', '/v1/ads?status=PENDING&limit=100', undefined, token);
    expect(listed.body.data).toHaveLength(20);
  }, 60_000);

  it('refuses a request beyond MAX_OPEN_AD_REQUESTS_PER_USER unconfirmed ones on the user\'s ads, and counts a lapsed one no more', async () => {
    const adId = await activeAd(100n);
    const open = async () => Number((await service.knex('ad_requests as r').join('ads as a', 'a.id', 'r.ad_id')
      .where({ 'a.creator_address': maker.address, 'r.status': 'PENDING' }).andWhere('r.deadline', '>', new Date(Date.now() - GRACE * 1000))
      .count({ n: '*' }).first())!.n);
    const before = await open();
    expect(before).toBeLessThan(50);
    const funds = await Promise.all(Array.from({ length: 60 - before }, () =>
      call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '5' }, makerToken)));
    expect(funds.filter((r) => r.status === 200)).toHaveLength(50 - before);
    expect(funds.filter((r) => r.status === 429)).toHaveLength(10);
    expect(funds.find((r) => r.status === 429)!.body).toEqual({
      statusCode: 429, error: 'Too Many Requests', code: 'AD_REQUEST_LIMIT', retryable: true,
      message: expect.stringMatching(/^too many open ad requests: 50 of yours are unconfirmed \(MAX_OPEN_AD_REQUESTS_PER_USER is 50\)/),
    });
    expect(await open()).toBe(50);
    // Withdraw, close and create are refused too, and change nothing.
    expect((await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '5', to: maker.address }, makerToken)).status).toBe(429);
    expect((await call(service, 'POST', `/v1/ads/${adId}/close`, { to: maker.address }, makerToken)).status).toBe(429);
    expect((await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1' }, makerToken)).status).toBe(429);
    expect(await books(adId)).toMatchObject({ poolAmount: '100', availableAmount: '100' });
    // A request past its deadline and grace is the audit's to settle: it no longer counts.
    const fund = (await requestOf(adId, 'fundAd'))!;
    await lapse(fund.id);
    expect((await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '5' }, makerToken)).status).toBe(200);
  }, 120_000);
});
