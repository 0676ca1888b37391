import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { JsonRpcProvider, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelayerClient } from '../../client/index.js';
import {
  ethersWallet, executeTrade, fileTradeStore, keypairWallet, memoryTradeStore, NotTheBridgerError, resumeTrade, type ExecuteOptions, type Quote, type TradeProgress,
  type TradeStore,
} from '../../client/execute.js';
import { fund } from '../../devnet/stellar/client.ts';
import { AD_CHAIN, eventually, ORDER_CHAIN, signOrderHash } from '../support/devnet-client.ts';
import { startOrchestratedService, type OrchestratedService } from '../support/scene.ts';
import {
  createEvmAdForStellarOrders, createStellarAdForEvmOrders, prepareStellarTrades, stellarLock, wxlmBalance, wxlmForXlm, xlmBalance, type StellarTradeWorld,
} from '../support/stellar-trades.ts';
import { call, loginEvm, loginStellar } from '../support/wallets.ts';

/**
 * `executeTrade` as a dApp calls it: the packed client's ./execute entry, signed in as the Bridger,
 * with an ethers Wallet and a stellar-sdk Keypair behind the adapters, from a quote to the end; the
 * Maker played beside it through HTTP. Both directions between anvil and the local Soroban network,
 * and one trade stopped after its deposit was confirmed and finished by `resumeTrade` from the JSON
 * file store, one taken up by `resumeTrade` from its id alone (another device: an empty store), and
 * one whose Soroban fees a sponsor account pays (`stellarFeePayer`). Payouts read back from the chains.
 */

/**
 * A whole trade's budget. About 5-20 s alone; at load 15-20 (two suites side by side) one took over
 * 240 s, and the trade it left running then moved the shared Maker's balance under the next test.
 */
const WHOLE_TRADE_MS = 480_000;

let stack: OrchestratedService;
let world: StellarTradeWorld;
let work: string;
const providers: JsonRpcProvider[] = [];

beforeAll(async () => {
  stack = await startOrchestratedService('embedded', { DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0' });
  const devnet = stack.service.devnet!;
  world = await prepareStellarTrades({ api: stack.service, knex: stack.service.knex, evm: devnet, stellar: devnet.stellar! });
  work = mkdtempSync(path.join(tmpdir(), 'relayer-execute-'));
}, 5 * 60_000);

afterAll(async () => {
  for (const provider of providers) provider.destroy();
  world?.chain.close();
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The Bridger's ethers wallet on an anvil chain (no read cache: a nonce read just before a mined transaction would be stale). */
function bridgerOn(chainId: string): Wallet {
  const provider = new JsonRpcProvider(world.evm.rpcUrls[chainId], undefined, { staticNetwork: true, pollingInterval: 100, cacheTimeout: -1 });
  providers.push(provider);
  return new Wallet(world.evmParties.bridgerKey!.privateKey, provider);
}

/** The Bridger's client, signed in with the wallet that deposits (its order chain's). */
function bridgerClient(token: string) {
  return createRelayerClient(stack.service.url, { accessToken: () => token });
}

async function quoteFor(routeId: string, amount: bigint): Promise<Quote> {
  const answer = await createRelayerClient(stack.service.url).GET('/v1/quotes', { params: { query: { routeId, amount: amount.toString() } } });
  return answer.data!;
}

/** The wallets and settings every run here uses: the Bridger's EVM key on either anvil chain, its Stellar key. */
const bridgerWallets = (): Pick<ExecuteOptions, 'evm' | 'stellar' | 'pollMs'> => {
  const wallets = new Map([AD_CHAIN, ORDER_CHAIN].map((chainId) => [chainId, ethersWallet(bridgerOn(chainId))]));
  return { evm: (chainId) => wallets.get(chainId), stellar: keypairWallet(world.bridgerStellar), pollMs: 1_000 };
};

/** Stroops the source of a Soroban transaction paid. */
async function stellarFee(hash: string): Promise<bigint> {
  const got = await world.server.getTransaction(hash);
  if (got.status !== 'SUCCESS') throw new Error(`transaction ${hash} is ${got.status}`);
  return BigInt(got.resultXdr.feeCharged().toString());
}

/** The Maker's EVM lock and ad-side unlock on AD_CHAIN, through HTTP, once the deposit is confirmed. */
async function makerLocksAndUnlocksOnEvm(tradeId: string, orderHash: string, makerToken: string): Promise<void> {
  const { makerKey } = world.evmParties;
  const lock = await call(world.api, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
  expect(lock.status).toBe(200);
  const lockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
  const unlock = await eventually('the proof', () => call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, orderHash) }, makerToken),
    (answer) => answer.status !== 409, 180_000);
  expect(unlock.status).toBe(200);
  const unlockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', unlock.body, unlock.body);
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: unlockTx }, makerToken)).status).toBe(200);
}

/** Resolves with the first progress event matching `step` and `status`; the progress listener to pass on. */
function progressWatch() {
  const seen: TradeProgress[] = [];
  const waiters: Array<{ match: (p: TradeProgress) => boolean; resolve: (p: TradeProgress) => void }> = [];
  return {
    seen,
    onProgress(progress: TradeProgress) {
      seen.push(progress);
      for (const waiter of waiters.filter((w) => w.match(progress))) waiter.resolve(progress);
    },
    when(step: TradeProgress['step'], status: TradeProgress['status']): Promise<TradeProgress> {
      const earlier = seen.find((p) => p.step === step && p.status === status);
      if (earlier) return Promise.resolve(earlier);
      return new Promise((resolve) => waiters.push({ match: (p) => p.step === step && p.status === status, resolve }));
    },
  };
}

describe('executeTrade', () => {
  it('carries an EVM -> Stellar trade alone when the Maker locks and goes silent: approves, deposits WXLM on anvil, takes the ad side on Soroban, unlocks the order side; each party paid exactly', async () => {
    const amount = 3_000_000n;
    const { bridger, maker } = world.evmParties;
    const { adId, routeId, makerToken } = await createStellarAdForEvmOrders(world, amount * 5n);
    const token = (await loginEvm(world.api, bridger)).body.tokens.access;
    const progress = progressWatch();
    const [makerWxlm, bridgerXlm, bridgerWxlm] = [await wxlmBalance(world, ORDER_CHAIN, maker.address), await xlmBalance(world, world.bridgerStellar.publicKey()), await wxlmBalance(world, ORDER_CHAIN, bridger.address)];

    const running = executeTrade(bridgerClient(token), await quoteFor(routeId, amount), { ...bridgerWallets(), adId, makerGraceMs: 0, onProgress: progress.onProgress });
    const confirmed = await progress.when('confirm', 'done');
    await stellarLock(world, { tradeId: confirmed.trade!.id, orderHash: confirmed.trade!.orderHash!, makerToken, adId, orderParams: undefined as never });
    const result = await running;

    expect(result).toMatchObject({ outcome: 'SETTLED', trade: { status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true, bridgerAddress: bridger.address } });
    expect(Object.keys(result.tx).sort()).toEqual(['adUnlock', 'approve', 'deposit', 'orderUnlock']);
    expect(await wxlmBalance(world, ORDER_CHAIN, bridger.address)).toBe(bridgerWxlm - amount);
    expect(await wxlmBalance(world, ORDER_CHAIN, maker.address)).toBe(makerWxlm + amount);
    // The Bridger sent the ad side from its own Stellar account: paid the amount, less that one fee.
    expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerXlm + amount - (await stellarFee(result.tx.adUnlock!)));
    const steps = progress.seen.map((p) => `${p.step}:${p.status}`);
    expect(steps.filter((step) => step.endsWith(':done'))).toEqual(['approve:done', 'create:done', 'deposit:done', 'confirm:done', 'unlock-ad:done', 'unlock-order:done', 'done:done']);
  }, WHOLE_TRADE_MS);

  it('carries a Stellar -> EVM trade: deposits XLM on Soroban, waits for the Maker\'s lock and ad-side unlock on anvil, unlocks the order side on Soroban; each party paid exactly', async () => {
    const amount = 2_000_000n;
    const tokens = wxlmForXlm(world);
    const { adId, routeId, makerToken } = await createEvmAdForStellarOrders(world, tokens, amount * 5n);
    const token = (await loginStellar(world.api, world.bridgerStellar)).body.tokens.access;
    const progress = progressWatch();
    const [bridgerWxlm, makerXlm, bridgerXlm] = [
      await wxlmBalance(world, AD_CHAIN, world.evmParties.bridger.address), await xlmBalance(world, world.makerStellar.publicKey()), await xlmBalance(world, world.bridgerStellar.publicKey()),
    ];

    const running = executeTrade(bridgerClient(token), await quoteFor(routeId, amount), { ...bridgerWallets(), adId, makerGraceMs: 600_000, onProgress: progress.onProgress });
    const confirmed = await progress.when('confirm', 'done');
    await makerLocksAndUnlocksOnEvm(confirmed.trade!.id, confirmed.trade!.orderHash!, makerToken);
    const result = await running;

    expect(result).toMatchObject({ outcome: 'SETTLED', trade: { status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true } });
    expect(Object.keys(result.tx).sort()).toEqual(['deposit', 'orderUnlock']);
    expect(await wxlmBalance(world, AD_CHAIN, world.evmParties.bridger.address)).toBe(bridgerWxlm + amount);
    expect(await xlmBalance(world, world.makerStellar.publicKey())).toBe(makerXlm + amount);
    // The Bridger paid the deposit and two fees (its deposit and its unlock), nothing else.
    const fees = (await stellarFee(result.tx.deposit!)) + (await stellarFee(result.tx.orderUnlock!));
    expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerXlm - amount - fees);
  }, WHOLE_TRADE_MS);

  it('stopped once its deposit is confirmed, is finished by resumeTrade from the JSON file store alone: nothing sent twice, each party paid exactly', async () => {
    const amount = 1_000_000n;
    const { bridger, maker } = world.evmParties;
    const { adId, routeId, makerToken } = await createStellarAdForEvmOrders(world, amount * 5n);
    const token = (await loginEvm(world.api, bridger)).body.tokens.access;
    const file = path.join(work, 'trades.json');
    const progress = progressWatch();
    const stop = new AbortController();
    const [makerWxlm, bridgerWxlm] = [await wxlmBalance(world, ORDER_CHAIN, maker.address), await wxlmBalance(world, ORDER_CHAIN, bridger.address)];

    const first = executeTrade(bridgerClient(token), await quoteFor(routeId, amount), {
      ...bridgerWallets(), adId, store: fileTradeStore(file), signal: stop.signal,
      onProgress(event) {
        progress.onProgress(event);
        if (event.step === 'confirm' && event.status === 'done') stop.abort(new Error('killed halfway'));
      },
    });
    await expect(first).rejects.toThrow('killed halfway');
    const kept = await fileTradeStore(file).list();
    expect(kept).toEqual([expect.objectContaining({ tradeId: expect.any(String), tx: { approve: expect.any(String), deposit: expect.any(String) } })]);
    expect(kept[0]!.outcome).toBeUndefined();
    const tradeId = kept[0]!.tradeId!;
    expect((await call(world.api, 'GET', `/v1/trades/${tradeId}`)).body.status).toBe('DEPOSITED');

    // The Maker locks meanwhile, then stays silent: the resumed run takes the ad side.
    await stellarLock(world, { tradeId, orderHash: kept[0]!.order!.orderHash, makerToken, adId, orderParams: undefined as never });
    const store: TradeStore = fileTradeStore(file);
    const resumed = await resumeTrade(bridgerClient(token), store, { ...bridgerWallets(), makerGraceMs: 0 });

    expect(resumed).toMatchObject({ tradeId, outcome: 'SETTLED', trade: { status: 'SETTLED' }, tx: { approve: kept[0]!.tx.approve, deposit: kept[0]!.tx.deposit } });
    expect(await wxlmBalance(world, ORDER_CHAIN, bridger.address)).toBe(bridgerWxlm - amount);
    expect(await wxlmBalance(world, ORDER_CHAIN, maker.address)).toBe(makerWxlm + amount);
    expect(await store.list()).toEqual([expect.objectContaining({ tradeId, outcome: 'SETTLED' })]);
    expect(await resumeTrade(bridgerClient(token), store)).toBeUndefined();
  }, WHOLE_TRADE_MS);

  it('takes up by its id alone a trade another device started (an empty store): refuses a wallet that is not its Bridger\'s, then takes the ad side and settles it; each party paid exactly', async () => {
    const amount = 1_500_000n;
    const { bridger, maker } = world.evmParties;
    const { adId, routeId, makerToken } = await createStellarAdForEvmOrders(world, amount * 5n);
    const token = (await loginEvm(world.api, bridger)).body.tokens.access;
    const stop = new AbortController();
    const [makerWxlm, bridgerWxlm, bridgerXlm] = [
      await wxlmBalance(world, ORDER_CHAIN, maker.address), await wxlmBalance(world, ORDER_CHAIN, bridger.address), await xlmBalance(world, world.bridgerStellar.publicKey()),
    ];
    // The first device: the trade up to its confirmed deposit, then gone with its store.
    const first = executeTrade(bridgerClient(token), await quoteFor(routeId, amount), {
      ...bridgerWallets(), adId, signal: stop.signal,
      onProgress(event) { if (event.step === 'confirm' && event.status === 'done') stop.abort(new Error('the first device is gone')); },
    });
    await expect(first).rejects.toThrow('the first device is gone');
    const { data: found } = await bridgerClient(token).GET('/v1/trades/all', { params: { query: { adId, status: ['DEPOSITED'] } } });
    const trade = found!.data.find((candidate: { adId: string }) => candidate.adId === adId)!;
    await stellarLock(world, { tradeId: trade.id, orderHash: trade.orderHash!, makerToken, adId, orderParams: undefined as never });

    // Another wallet (the Maker's key on the order chain) is refused before anything is sent.
    const store = memoryTradeStore();
    const makerWallet = ethersWallet(new Wallet(world.evmParties.makerKey!.privateKey, bridgerOn(ORDER_CHAIN).provider));
    await expect(resumeTrade(bridgerClient(token), store, { ...bridgerWallets(), evm: makerWallet, tradeId: trade.id })).rejects.toBeInstanceOf(NotTheBridgerError);
    expect(await store.list()).toEqual([]);

    const resumed = await resumeTrade(bridgerClient(token), store, { ...bridgerWallets(), tradeId: trade.id, makerGraceMs: 0 });
    expect(resumed).toMatchObject({ tradeId: trade.id, outcome: 'SETTLED', trade: { status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true } });
    expect(Object.keys(resumed!.tx).sort()).toEqual(['adUnlock', 'deposit', 'orderUnlock']);
    expect(resumed!.tx.deposit).toBe(trade.transactions.find((tx: { step: string }) => tx.step === 'deposit')!.txHash);
    expect(await wxlmBalance(world, ORDER_CHAIN, bridger.address)).toBe(bridgerWxlm - amount);
    expect(await wxlmBalance(world, ORDER_CHAIN, maker.address)).toBe(makerWxlm + amount);
    expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerXlm + amount - (await stellarFee(resumed!.tx.adUnlock!)));
    expect(await store.list()).toEqual([expect.objectContaining({ tradeId: trade.id, outcome: 'SETTLED' })]);
  }, WHOLE_TRADE_MS);

  it('with a Stellar fee payer, carries a Stellar -> EVM trade whose every Soroban fee the sponsor pays: the Bridger\'s XLM moves by exactly the deposit, the Bridger only signs its authorisation entries', async () => {
    const amount = 2_500_000n;
    const tokens = wxlmForXlm(world);
    const { adId, routeId, makerToken } = await createEvmAdForStellarOrders(world, tokens, amount * 5n);
    const sponsor = Keypair.random();
    await fund(world.server, sponsor.publicKey());
    const token = (await loginStellar(world.api, world.bridgerStellar)).body.tokens.access;
    const progress = progressWatch();
    const bridgerKeys = keypairWallet(world.bridgerStellar);
    const entries: string[] = [];
    const stellar = { ...bridgerKeys, signAuthEntry: async (preimage: string, options: { networkPassphrase: string }) => {
      entries.push(preimage);
      return bridgerKeys.signAuthEntry!(preimage, options);
    } };
    const [bridgerWxlm, makerXlm, bridgerXlm, sponsorXlm] = [
      await wxlmBalance(world, AD_CHAIN, world.evmParties.bridger.address), await xlmBalance(world, world.makerStellar.publicKey()),
      await xlmBalance(world, world.bridgerStellar.publicKey()), await xlmBalance(world, sponsor.publicKey()),
    ];

    const running = executeTrade(bridgerClient(token), await quoteFor(routeId, amount), {
      ...bridgerWallets(), stellar, stellarFeePayer: keypairWallet(sponsor), adId, makerGraceMs: 600_000, onProgress: progress.onProgress,
    });
    const confirmed = await progress.when('confirm', 'done');
    await makerLocksAndUnlocksOnEvm(confirmed.trade!.id, confirmed.trade!.orderHash!, makerToken);
    const result = await running;

    expect(result).toMatchObject({ outcome: 'SETTLED', trade: { status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true } });
    expect(Object.keys(result.tx).sort()).toEqual(['deposit', 'orderUnlock']);
    expect(await wxlmBalance(world, AD_CHAIN, world.evmParties.bridger.address)).toBe(bridgerWxlm + amount);
    expect(await xlmBalance(world, world.makerStellar.publicKey())).toBe(makerXlm + amount);
    // The deposit's transfer was authorised by the Bridger's signed entry; both transactions' source and fees are the sponsor's.
    expect(entries.length).toBeGreaterThan(0);
    expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerXlm - amount);
    const fees = (await stellarFee(result.tx.deposit!)) + (await stellarFee(result.tx.orderUnlock!));
    expect(await xlmBalance(world, sponsor.publicKey())).toBe(sponsorXlm - fees);
  }, WHOLE_TRADE_MS);

  it('runs docs/quickstart.md as written (its URLs pointed at this devnet): the Maker\'s ad and lock, the Bridger\'s trade in one call, SETTLED', async () => {
    const doc = readFileSync(new URL('../../docs/quickstart.md', import.meta.url), 'utf8');
    const code = /```ts\n([\s\S]*?)```/.exec(doc)![1]!
      .replaceAll("'@cross-chain-relayer/client/execute'", "'../client/execute.js'").replaceAll("'@cross-chain-relayer/client/evm'", "'../client/evm.js'")
      .replaceAll("'@cross-chain-relayer/client'", "'../client/index.js'").replaceAll('http://localhost:3000', stack.service.url)
      .replaceAll('http://localhost:8545', world.evm.rpcUrls[ORDER_CHAIN]!).replaceAll('http://localhost:8546', world.evm.rpcUrls[AD_CHAIN]!);
    // Inside the checkout, so that ethers resolves from its node_modules; Node runs the TypeScript as it is (type stripping).
    const script = path.join(import.meta.dirname, '..', '..', '.data', `quickstart-${process.pid}.ts`);
    mkdirSync(path.dirname(script), { recursive: true });
    writeFileSync(script, code);
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [script], { env: { PATH: process.env.PATH ?? '' }, timeout: 200_000 });
      expect(stdout).toMatch(/^done done\s*\nSETTLED \{/m);
    } finally {
      rmSync(script, { force: true });
    }
  }, WHOLE_TRADE_MS);
});
