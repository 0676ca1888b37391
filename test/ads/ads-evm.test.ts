import { Contract, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import type { ActionName } from '../../chains/request-schema.ts';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { loadDevnetArtifacts } from '../../contracts/evm/artifacts.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, loginEvm, RawJson } from '../support/wallets.ts';

/**
 * Ads end to end on the devnet: a Maker signs in, asks for signed call data, sends real
 * transactions to the AdManager on anvil 31337 with their own wallet, and confirms them.
 */

const web3 = new Web3();
const [, makerKey, strangerKey] = anvilAccounts(3);
const maker = web3.eth.accounts.privateKeyToAccount(makerKey!.privateKey);
const stranger = web3.eth.accounts.privateKeyToAccount(strangerKey!.privateKey);

let service: TestService;
let provider: JsonRpcProvider;
let makerToken: string;
let strangerToken: string;
let routeId: string;
let adManager: Contract;
let token: Contract;
let makerWallet: Wallet;

const A = '31337';

async function mined(tx: Promise<{ wait(): Promise<unknown>; hash: string }>): Promise<string> {
  const sent = await tx;
  await sent.wait();
  return sent.hash;
}

/** What a dApp does with a signed response: call the AdManager with it from the Maker's wallet. */
async function send(action: ActionName, signed: Record<string, any>, options: { adToken?: string; approve?: bigint } = {}): Promise<string> {
  if (options.approve) await mined(token.getFunction('approve')(await adManager.getAddress(), options.approve));
  const evmCall = evmContractCall(action, signed as Parameters<typeof evmContractCall>[1], { adToken: options.adToken });
  return mined(adManager.getFunction(evmCall.functionName)(...evmCall.args, { value: evmCall.value }));
}

const ad = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`, undefined, makerToken)).body;
const tableCounts = async () => ({
  ads: Number((await service.knex('ads').count({ n: '*' }))[0]!.n),
  requests: Number((await service.knex('ad_requests').count({ n: '*' }))[0]!.n),
  balances: await service.knex('ads').select('id', 'pool_amount', 'paid_out_amount', 'withdrawing_amount', 'base_status', 'min_amount', 'max_amount', 'metadata').orderBy('id'),
});

/** Creates an ad of `amount` TUSD and confirms it; returns its id. */
async function createConfirmedAd(amount: bigint, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: amount.toString(), ...extra }, makerToken);
  expect(created.status).toBe(200);
  const txHash = await send('createAd', created.body, { approve: amount });
  expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
  return created.body.adId;
}

beforeAll(async () => {
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0' });
  const artifacts = await loadDevnetArtifacts();
  provider = new JsonRpcProvider(service.devnet!.rpcUrls[A], undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
  makerWallet = new Wallet(makerKey!.privateKey, provider);
  const deployment = service.devnet!.deployments[A]!;
  adManager = new Contract(deployment.adManager, artifacts.adManager.abi as InterfaceAbi, makerWallet);
  token = new Contract(deployment.testErc20, artifacts.testErc20.abi as InterfaceAbi, makerWallet);
  makerToken = (await loginEvm(service, maker)).body.tokens.access;
  strangerToken = (await loginEvm(service, stranger)).body.tokens.access;
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${A}&orderChainId=31338&symbol=TUSD`);
  routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
});

afterAll(async () => {
  provider?.destroy();
  await service?.close();
});

describe('an ad on an EVM chain, through its whole life', () => {
  let adId: string;

  it('creates a PENDING ad that only its creator can see, with signed createAd call data', async () => {
    const res = await call(service, 'POST', '/v1/ads/create', {
      routeId, creatorDstAddress: maker.address.toLowerCase(), fundAmount: '1000', minAmount: '10', maxAmount: '500', metadata: { name: 'fast lane' },
    }, makerToken);
    expect(res.status).toBe(200);
    adId = res.body.adId;
    expect(res.body).toMatchObject({
      chainId: A, chainKind: 'EVM', contractAddress: service.devnet!.deployments[A]!.adManager, initialAmount: '1000',
      orderChainId: '31338', adRecipient: maker.address, adToken: service.devnet!.deployments[A]!.testErc20, timeToExpire: 600,
    });
    expect(Number(res.body.deadline)).toBeGreaterThan(Date.now() / 1000);
    expect(res.body.signature).toMatch(/^0x[0-9a-f]{130}$/);

    const listed = await call(service, 'GET', `/v1/ads?routeId=${routeId}`);
    expect(listed.body.data.map((a: any) => a.id)).not.toContain(adId);
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).status).toBe(404);
    expect((await call(service, 'GET', `/v1/ads/${adId}`, undefined, strangerToken)).status).toBe(404);
    expect((await call(service, 'GET', '/v1/ads?status=PENDING')).status).toBe(401);
    const own = await call(service, 'GET', '/v1/ads?status=PENDING', undefined, makerToken);
    expect(own.body.data.map((a: any) => a.id)).toEqual([adId]);
    expect((await call(service, 'GET', '/v1/ads?status=PENDING', undefined, strangerToken)).body.data).toEqual([]);
    expect((await ad(adId)).status).toBe('PENDING');

    // Sent and confirmed: the ad is ACTIVE with the funded amount.
    const txHash = await send('createAd', res.body, { approve: 1000n });
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken)).body).toEqual({ adId, success: true });
    expect(await ad(adId)).toMatchObject({ status: 'ACTIVE', poolAmount: '1000', availableAmount: '1000', lockedAmount: '0', minAmount: '10', maxAmount: '500', metadata: { name: 'fast lane' } });
    expect((await call(service, 'GET', `/v1/ads?routeId=${routeId}`)).body.data.map((a: any) => a.id)).toContain(adId);

    // The same transaction again: same answer, nothing changes.
    const before = await tableCounts();
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken)).body).toEqual({ adId, success: true });
    expect(await tableCounts()).toEqual(before);
  });

  it('funds: the pool grows only when the fund transaction is confirmed, and two racing confirms count once', async () => {
    const res = await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '250' }, makerToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ adId, amount: '250', chainKind: 'EVM' });
    expect((await ad(adId)).poolAmount).toBe('1000');
    const txHash = await send('fundAd', res.body, { approve: 250n, adToken: service.devnet!.deployments[A]!.testErc20 });
    const both = await Promise.all([1, 2].map(() => call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken)));
    expect(both.map((r) => r.body)).toEqual([{ adId, success: true }, { adId, success: true }]);
    expect(await ad(adId)).toMatchObject({ poolAmount: '1250', availableAmount: '1250' });
  });

  it('withdraws at most the available balance, holding the amount until confirmed', async () => {
    const tooMuch = await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1251', to: maker.address }, makerToken);
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.message).toMatch(/poolAmountWithdraw 1251 exceeds the available balance 1250/);
    const res = await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '200', to: maker.address }, makerToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ adId, amount: '200', to: maker.address });
    // Held at once: a second withdrawal of the whole balance no longer fits.
    expect((await ad(adId)).availableAmount).toBe('1050');
    expect((await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1250', to: maker.address }, makerToken)).status).toBe(409);
    const balanceBefore: bigint = await token.getFunction('balanceOf')(maker.address);
    const txHash = await send('withdrawFromAd', res.body);
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
    expect(await token.getFunction('balanceOf')(maker.address)).toBe(balanceBefore + 200n);
    expect(await ad(adId)).toMatchObject({ poolAmount: '1250', availableAmount: '1050' });
  });

  it('updates status, bounds and metadata without a transaction', async () => {
    const res = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { status: 'PAUSED', minAmount: '20', metadata: { name: 'slow lane' } }, makerToken);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: adId, status: 'PAUSED', setStatus: 'PAUSED', creatorAddress: maker.address, minAmount: '20', maxAmount: '500', metadata: { name: 'slow lane' } });
    const cleared = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { status: 'ACTIVE', maxAmount: null }, makerToken);
    expect(cleared.body).toMatchObject({ status: 'ACTIVE', maxAmount: null, minAmount: '20' });
  });

  it('closes: the rest is paid out, the ad is CLOSED for good', async () => {
    const res = await call(service, 'POST', `/v1/ads/${adId}/close`, { to: maker.address }, makerToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ adId, to: maker.address });
    // From the close request on, nothing can be withdrawn or reserved.
    expect((await ad(adId)).availableAmount).toBe('0');
    const balanceBefore: bigint = await token.getFunction('balanceOf')(maker.address);
    const txHash = await send('closeAd', res.body);
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
    expect(await token.getFunction('balanceOf')(maker.address)).toBe(balanceBefore + 1050n);
    expect(await ad(adId)).toMatchObject({ status: 'CLOSED', availableAmount: '0', poolAmount: '1250' });
    const before = await tableCounts();
    for (const [method, path, body] of [
      ['PATCH', `/v1/ads/${adId}/update`, { status: 'ACTIVE' }],
      ['POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '1' }],
      ['POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1', to: maker.address }],
      ['POST', `/v1/ads/${adId}/close`, { to: maker.address }],
    ] as const) {
      const refused = await call(service, method, path, body, makerToken);
      expect(refused.status, path).toBe(409);
    }
    expect(await tableCounts()).toEqual(before);
  });
});

describe('ad transactions that do not answer', () => {
  it('rejects a transaction of another ad, a replayed one and an unknown hash, changing nothing', async () => {
    const first = await createConfirmedAd(100n);
    const second = await createConfirmedAd(100n);
    const fund = await call(service, 'POST', `/v1/ads/${first}/fund`, { poolAmountTopUp: '5' }, makerToken);
    const fundTx = await send('fundAd', fund.body, { approve: 5n, adToken: service.devnet!.deployments[A]!.testErc20 });
    await call(service, 'POST', `/v1/ads/${second}/fund`, { poolAmountTopUp: '5' }, makerToken);
    const before = await tableCounts();

    const foreign = await call(service, 'POST', `/v1/ads/${second}/confirm`, { txHash: fundTx }, makerToken);
    expect(foreign.status).toBe(422);
    expect(foreign.body.message).toEqual([expect.stringMatching(/^txHash .* answers no request of ad/)]);
    const unknown = await call(service, 'POST', `/v1/ads/${second}/confirm`, { txHash: `0x${'ab'.repeat(32)}` }, makerToken);
    expect(unknown.status).toBe(422);
    expect(await tableCounts()).toEqual(before);

    expect((await call(service, 'POST', `/v1/ads/${first}/confirm`, { txHash: fundTx }, makerToken)).status).toBe(200);
    const replayed = await call(service, 'POST', `/v1/ads/${second}/confirm`, { txHash: fundTx }, makerToken);
    expect(replayed.status).toBe(422);
    expect(replayed.body.message).toEqual([expect.stringMatching(/^txHash .* answers no request of ad/)]);
  });

  it('answers a transaction not yet mined with a retryable 409, then accepts it once mined', async () => {
    const adId = await createConfirmedAd(100n);
    const fund = await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '7' }, makerToken);
    await mined(token.getFunction('approve')(await adManager.getAddress(), 7n));
    await provider.send('evm_setAutomine', [false]);
    let txHash: string;
    try {
      const evmCall = evmContractCall('fundAd', fund.body, { adToken: service.devnet!.deployments[A]!.testErc20 });
      txHash = (await adManager.getFunction(evmCall.functionName)(...evmCall.args, { value: evmCall.value })).hash;
      const pending = await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken);
      expect(pending.status).toBe(409);
      expect(pending.body.message).toMatch(/pending/);
      expect((await ad(adId)).poolAmount).toBe('100');
    } finally {
      await provider.send('evm_setAutomine', [true]);
    }
    await provider.send('evm_mine', []);
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
    expect((await ad(adId)).poolAmount).toBe('107');
  });
});

describe('who may change an ad', () => {
  it('answers 401 without a token, 403 to anyone but the creator, 404 for an unknown ad, and writes nothing', async () => {
    const adId = await createConfirmedAd(50n);
    const before = await tableCounts();
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '1' }],
      ['POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1', to: stranger.address }],
      ['POST', `/v1/ads/${adId}/close`, { to: stranger.address }],
      ['POST', `/v1/ads/${adId}/confirm`, { txHash: `0x${'ab'.repeat(32)}` }],
      ['PATCH', `/v1/ads/${adId}/update`, { status: 'PAUSED' }],
    ] as const) {
      expect((await call(service, method, path, body)).status, path).toBe(401);
      const foreign = await call(service, method, path, body, strangerToken);
      expect(foreign.status, path).toBe(403);
      expect(foreign.body.message).toMatch(/only the ad's creator/);
      expect((await call(service, method, path.replace(adId, unknown), body, makerToken)).status, path).toBe(404);
    }
    // A Stellar-only user has no wallet of the ad chain's kind.
    expect(await tableCounts()).toEqual(before);
  });
});

/** `fields` plus metadata nested `depth` levels, written as text: JSON.stringify itself overflows on such depths. */
function withNestedMetadata(fields: Record<string, unknown>, depth: number): RawJson {
  const metadata = `${'{"a":'.repeat(depth - 1)}[]${'}'.repeat(depth - 1)}`;
  return new RawJson(`${JSON.stringify(fields).slice(0, -1)}${Object.keys(fields).length > 0 ? ',' : ''}"metadata":${metadata}}`);
}

describe('bad ad input', () => {
  it('answers 422 naming the field and writes nothing', async () => {
    const before = await tableCounts();
    const cases: [string, Record<string, unknown> | RawJson, RegExp][] = [
      ['fundAmount', { routeId, creatorDstAddress: maker.address, fundAmount: '-5' }, /^fundAmount must be a non-negative integer/],
      ['fundAmount', { routeId, creatorDstAddress: maker.address, fundAmount: '0' }, /^fundAmount must be greater than 0/],
      ['fundAmount', { routeId, creatorDstAddress: maker.address, fundAmount: '1'.repeat(79) }, /^fundAmount must fit in 256 bits/],
      ['fundAmount', { routeId, creatorDstAddress: maker.address, fundAmount: 5 }, /^fundAmount must be a non-negative integer/],
      ['routeId', { routeId: '00000000-0000-4000-8000-000000000000', creatorDstAddress: maker.address, fundAmount: '5' }, /^routeId is not a known route/],
      ['creatorDstAddress', { routeId, creatorDstAddress: 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7', fundAmount: '5' }, /^creatorDstAddress must be a EVM address of chain 31338/],
      ['minAmount', { routeId, creatorDstAddress: maker.address, fundAmount: '5', minAmount: '10', maxAmount: '9' }, /^minAmount must not exceed maxAmount/],
      ['creator', { routeId, creatorDstAddress: maker.address, fundAmount: '5', creator: maker.address }, /unknown field creator/],
      ['metadata', { routeId, creatorDstAddress: maker.address, fundAmount: '5', metadata: { big: 'x'.repeat(5000) } }, /^metadata must be at most 4096 bytes/],
      ['metadata', { routeId, creatorDstAddress: maker.address, fundAmount: '5', metadata: { deep: [{ 'k\u0000': 'v' }] } }, /^metadata must not contain NUL bytes/],
      ['metadata', { routeId, creatorDstAddress: maker.address, fundAmount: '5', metadata: { name: '\uD800' } }, /^metadata must not contain NUL bytes or unpaired surrogates/],
      // Nested deeper than any recursive walk survives (3,000 levels used to overflow the stack: a 500).
      ['metadata', withNestedMetadata({ routeId, creatorDstAddress: maker.address, fundAmount: '5' }, 3_000), /^metadata must nest at most 32 levels deep/],
      ['metadata', withNestedMetadata({ routeId, creatorDstAddress: maker.address, fundAmount: '5' }, 15_000), /^metadata must nest at most 32 levels deep/],
      ['metadata', withNestedMetadata({ routeId, creatorDstAddress: maker.address, fundAmount: '5' }, 33), /^metadata must nest at most 32 levels deep/],
    ];
    for (const [field, body, message] of cases) {
      const res = await call(service, 'POST', '/v1/ads/create', body, makerToken);
      expect(res.status, field).toBe(422);
      expect(res.body.message, field).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
    }
    const adId = await createConfirmedAd(30n);
    const afterCreate = await tableCounts();
    const updates: [Record<string, unknown> | RawJson, RegExp][] = [
      [{ status: 'CLOSED' }, /^status must be one of ACTIVE, PAUSED/],
      [{ status: 'EXHAUSTED' }, /^status must be one of ACTIVE, PAUSED/],
      [{ minAmount: '600', maxAmount: '500' }, /^minAmount must not exceed maxAmount/],
      [{}, /at least one of/],
      [withNestedMetadata({}, 3_000), /^metadata must nest at most 32 levels deep/],
    ];
    for (const [body, message] of updates) {
      const res = await call(service, 'PATCH', `/v1/ads/${adId}/update`, body, makerToken);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.message).toEqual(expect.arrayContaining([expect.stringMatching(message)]));
    }
    const badTo = await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1', to: 'not-an-address' }, makerToken);
    expect(badTo.status).toBe(422);
    expect(badTo.body.message).toEqual([expect.stringMatching(/^to must be a EVM address of chain 31337/)]);
    expect((await tableCounts()).requests).toBe(afterCreate.requests);
    expect(before.ads + 1).toBe(afterCreate.ads);
  });
});
