import { Address, Keypair, nativeToScVal, rpc, type xdr } from '@stellar/stellar-sdk';
import { Contract, ContractFactory, Wallet, type InterfaceAbi } from 'ethers';
import type { Knex } from 'knex';
import { expect } from 'vitest';
import { stellarContractCall, stellarTimeoutCall } from '../../chains/stellar/call-args.ts';
import type { OrderParams } from '../../chains/order.ts';
import type { ActionName } from '../../chains/request-schema.ts';
import { sep53Digest } from '../../chains/wallet-signature.ts';
import { loadDevnetArtifacts } from '../../contracts/evm/artifacts.ts';
import { anvilAccounts, type BridgeDeployment } from '../../devnet/index.ts';
import { STELLAR_DEVNET_CHAIN_ID, type RegistryFile } from '../../devnet/registry-file.ts';
import { fund, readContract, submitOperation, type Submitted } from '../../devnet/stellar/client.ts';
import type { StellarDeployment } from '../../devnet/stellar/deploy.ts';
import type { StellarNode } from '../../devnet/stellar/node.ts';
import { importRegistry } from '../../registry/import.ts';
import { AD_CHAIN, devnetClient, eventually, mined, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from './devnet-client.ts';
import type { TestService } from './service.ts';
import { expectSettledTradePushed } from './pushed-stream.ts';
import { call, loginEvm, loginStellar } from './wallets.ts';

/**
 * Whole trades with a Stellar side, as the two parties' dApps run them through the API: the EVM
 * side with ethers on anvil, the Stellar side with @stellar/stellar-sdk on the local Soroban
 * network (devnet/stellar, the real host running the contracts' wasm and verifying the proof).
 * Shared by the embedded and the Temporal test files.
 *
 * The routes are XLM on chain 148 against WXLM, a 7-decimal ERC-20 deployed here on each anvil
 * chain and registered as the same asset (XLM), so the route prices 1:1 (domain/route-pricing.ts).
 */

export const STELLAR = STELLAR_DEVNET_CHAIN_ID;
const WXLM = { symbol: 'WXLM', name: 'Wrapped Lumens', decimals: 7, asset: 'XLM' } as const;
/** Order states as both contracts number them: OrderPortal None/Deposited/Unlocked/Refunded, AdManager None/Locked/Unlocked/Released. */
export const ORDER_STATE = { none: 0, deposited: 1, locked: 1, unlocked: 2, refunded: 3, released: 3 } as const;

/** What the trades need: the API, its database (for the registry import), and both networks. */
export interface StellarTradeInput {
  api: TestService;
  knex: Knex;
  evm: { rpcUrls: Record<string, string>; deployments: Record<string, BridgeDeployment> };
  stellar: { node: StellarNode; deployment: StellarDeployment };
}

/** Both networks with the parties' wallets and the views the assertions read. */
export interface StellarTradeWorld extends StellarTradeInput {
  chain: DevnetClient;
  server: rpc.Server;
  passphrase: string;
  /** Per EVM chain id: the WXLM token. */
  wxlm: Record<string, string>;
  /** The anvil accounts playing the EVM halves of Maker and Bridger. */
  evmParties: ReturnType<typeof tradeParties>;
  /** The Stellar halves: funded by the network's friendbot. */
  makerStellar: Keypair;
  bridgerStellar: Keypair;
  /** Seconds the Stellar ledger clock is ahead of this machine's (advanceLedgerTo). */
  ledgerAhead: number;
}

/** The network's ledger time as the submissions' time bounds need it. */
const ledgerTime = (world: StellarTradeWorld) => (world.ledgerAhead > 0 ? Math.floor(Date.now() / 1000) + world.ledgerAhead : undefined);

/** The Stellar half's submission of a signed response, as a Stellar dApp makes it. */
export async function submitStellar(world: StellarTradeWorld, signer: Keypair, action: ActionName, signed: any, extras: { orderParams?: OrderParams; proof?: string } = {}): Promise<Submitted> {
  return submitOperation(world.server, world.passphrase, signer, stellarContractCall(action, signed, extras), { ledgerTime: ledgerTime(world) });
}

/** Anyone's refund (OrderPortal) or lock release (AdManager) of an order on Soroban. */
export async function submitStellarTimeout(world: StellarTradeWorld, signer: Keypair, action: 'refund' | 'releaseLock', orderParams: OrderParams): Promise<Submitted> {
  return submitOperation(world.server, world.passphrase, signer, stellarTimeoutCall(action, orderParams), { ledgerTime: ledgerTime(world) });
}

/** A view of a Soroban contract, read through the network's simulation. */
export const sorobanView = (world: StellarTradeWorld, contract: string, fn: string, args: xdr.ScVal[] = []) =>
  readContract(world.server, world.passphrase, world.stellar.deployment.deployer, contract, fn, args);

export const xlmBalance = async (world: StellarTradeWorld, holder: string): Promise<bigint> =>
  sorobanView(world, world.stellar.deployment.xlm, 'balance', [new Address(holder).toScVal()]);

const orderHashArg = (orderHash: string) => nativeToScVal(Buffer.from(orderHash.slice(2), 'hex'), { type: 'bytes' });
const u256 = (value: string) => nativeToScVal(BigInt(value), { type: 'u256' });

/** An order's state and whether its nullifier is spent, on a Soroban AdManager or OrderPortal. */
export async function sorobanOrder(world: StellarTradeWorld, contract: string, orderHash: string, nullifierHash?: string): Promise<{ state: number; nullifierSpent?: boolean }> {
  const state = Number(await sorobanView(world, contract, 'order_state', [orderHashArg(orderHash)]));
  if (nullifierHash === undefined) return { state };
  return { state, nullifierSpent: await sorobanView(world, contract, 'nullifier_spent', [u256(nullifierHash)]) };
}

/** The same on an EVM AdManager or OrderPortal. */
export async function evmOrder(world: StellarTradeWorld, chainId: string, name: 'adManager' | 'orderPortal', orderHash: string, nullifierHash?: string): Promise<{ state: number; nullifierSpent?: boolean }> {
  const contract = world.chain.contract(chainId, name, world.evmParties.makerKey!.privateKey);
  const state = Number(await contract.getFunction('orders')(orderHash));
  if (nullifierHash === undefined) return { state };
  return { state, nullifierSpent: await contract.getFunction('nullifierSpent')(BigInt(nullifierHash)) };
}

export async function wxlmBalance(world: StellarTradeWorld, chainId: string, holder: string): Promise<bigint> {
  return new Contract(world.wxlm[chainId]!, ['function balanceOf(address) view returns (uint256)'], world.chain.provider(chainId)).getFunction('balanceOf')(holder);
}

export async function approveWxlm(world: StellarTradeWorld, chainId: string, key: string, spender: 'adManager' | 'orderPortal', amount: bigint): Promise<void> {
  const token = new Contract(world.wxlm[chainId]!, ['function approve(address,uint256) returns (bool)'], new Wallet(key, world.chain.provider(chainId)));
  await mined(token.getFunction('approve')(world.evm.deployments[chainId]![spender], amount));
}

/**
 * Deploys WXLM (7 decimals) on both anvil chains, mints it to the EVM Maker and Bridger, registers
 * it with routes to and from XLM on chain 148, and funds the Stellar Maker and Bridger.
 */
export async function prepareStellarTrades(input: StellarTradeInput): Promise<StellarTradeWorld> {
  const evmParties = tradeParties();
  const artifacts = await loadDevnetArtifacts();
  const chain = await devnetClient(input.evm.rpcUrls, input.evm.deployments);
  const wxlm: Record<string, string> = {};
  for (const chainId of [AD_CHAIN, ORDER_CHAIN]) {
    // anvil's account 3: its own deployer, so no nonce races with the parties' transactions.
    const deployer = new Wallet(anvilAccounts(4)[3]!.privateKey, chain.provider(chainId));
    const token = await new ContractFactory(artifacts.testErc20.abi as InterfaceAbi, artifacts.testErc20.bytecode, deployer).deploy(WXLM.name, WXLM.symbol, WXLM.decimals);
    await token.waitForDeployment();
    wxlm[chainId] = await token.getAddress();
    for (const party of [evmParties.maker, evmParties.bridger]) {
      await mined(token.getFunction('mint')(party.address, 1_000_000n * 10n ** 7n) as Promise<any>);
    }
  }
  const xlm = input.stellar.deployment.xlm;
  const registry: RegistryFile = {
    chains: [],
    tokens: Object.entries(wxlm).map(([chainId, address]) => ({ chainId, ...WXLM, address, kind: 'ERC20' as const })),
    routes: Object.entries(wxlm).flatMap(([chainId, address]) => [
      { adToken: { chainId, address }, orderToken: { chainId: STELLAR, address: xlm } },
      { adToken: { chainId: STELLAR, address: xlm }, orderToken: { chainId, address } },
    ]),
  };
  await importRegistry(input.knex, registry);
  const server = new rpc.Server(input.stellar.node.rpcUrl, { allowHttp: true });
  const makerStellar = Keypair.random();
  const bridgerStellar = Keypair.random();
  await Promise.all([fund(server, makerStellar.publicKey()), fund(server, bridgerStellar.publicKey())]);
  return { ...input, chain, server, passphrase: input.stellar.node.networkPassphrase, wxlm, evmParties, makerStellar, bridgerStellar, ledgerAhead: 0 };
}

/**
 * The two tokens of a route from an ad on anvil 31338 to orders on Stellar, with how a dApp
 * approves the ad token and how each side's balances are read.
 */
export interface EvmAdStellarOrderTokens {
  adToken: string;
  orderToken: string;
  approveAd(key: string, amount: bigint): Promise<void>;
  adBalance(holder: string): Promise<bigint>;
  orderBalance(holder: string): Promise<bigint>;
}

/** WXLM (7 decimals) on anvil for XLM on Stellar: one asset, same decimals, the same number on both chains. */
export const wxlmForXlm = (world: StellarTradeWorld): EvmAdStellarOrderTokens => ({
  adToken: world.wxlm[AD_CHAIN]!,
  orderToken: world.stellar.deployment.xlm,
  approveAd: (key, amount) => approveWxlm(world, AD_CHAIN, key, 'adManager', amount),
  adBalance: (holder) => wxlmBalance(world, AD_CHAIN, holder),
  orderBalance: (holder) => xlmBalance(world, holder),
});

/** The devnet's TUSD: 6 decimals on anvil, the SEP-41 test token with 7 on Stellar (one asset: 1 unit on anvil is 10 on Stellar). */
export const tusdForTusd = (world: StellarTradeWorld): EvmAdStellarOrderTokens => ({
  adToken: world.evm.deployments[AD_CHAIN]!.testErc20,
  orderToken: world.stellar.deployment.testToken,
  approveAd: (key, amount) => world.chain.approve(AD_CHAIN, key, 'adManager', amount),
  adBalance: (holder) => world.chain.balanceOf(AD_CHAIN, holder),
  orderBalance: async (holder) => sorobanView(world, world.stellar.deployment.testToken, 'balance', [new Address(holder).toScVal()]),
});

/**
 * What Freighter's `signMessage(orderHash)` returns: SEP-53 over the order hash's `0x` hex as UTF-8
 * text, base64 (POST /unlock takes it beside the raw-bytes form).
 */
export const signOrderHashTextStellar = (key: Keypair, text: string): string =>
  key.sign(sep53Digest(Buffer.from(text, 'utf8'))).toString('base64');

/** A Stellar wallet's SEP-53 signature over the 32 bytes of an order hash (what POST /unlock takes). */
export const signOrderHashStellar = (key: Keypair, orderHash: string): string =>
  key.sign(sep53Digest(Buffer.from(orderHash.slice(2), 'hex'))).toString('base64');

async function routeBetween(world: StellarTradeWorld, adChainId: string, adToken: string, orderChainId: string): Promise<string> {
  const routes = await call(world.api, 'GET', `/v1/routes?adChainId=${adChainId}&orderChainId=${orderChainId}`);
  const route = routes.body.data.find((r: { adToken: { address: string } }) => r.adToken.address === adToken);
  if (!route) throw new Error(`no route ${adChainId}/${adToken} -> ${orderChainId}`);
  return route.id;
}

const tradeOf = async (world: StellarTradeWorld, id: string) => (await call(world.api, 'GET', `/v1/trades/${id}`)).body;
const adOf = async (world: StellarTradeWorld, id: string) => (await call(world.api, 'GET', `/v1/ads/${id}`)).body;

/** What a whole trade leaves for the assertions and the timeouts' tests. */
export interface TradeRun {
  tradeId: string;
  adId: string;
  orderParams: OrderParams;
  orderHash: string;
}

/** The EVM Maker's ad of `pool` (ad token units) on anvil 31338 for orders on Stellar, created and confirmed through HTTP. */
export async function createEvmAdForStellarOrders(
  world: StellarTradeWorld, tokens: EvmAdStellarOrderTokens, pool: bigint,
  /** Runs once the ad's transaction is mined, before the Maker reports it. */
  beforeConfirm?: (ad: AdBeforeConfirm) => Promise<void>,
): Promise<{ adId: string; routeId: string; makerToken: string }> {
  const { makerKey, maker } = world.evmParties;
  const makerToken = (await loginEvm(world.api, maker)).body.tokens.access;
  const routeId = await routeBetween(world, AD_CHAIN, tokens.adToken, STELLAR);
  const ad = await call(world.api, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: world.makerStellar.publicKey(), fundAmount: pool.toString() }, makerToken);
  expect(ad.status).toBe(200);
  await tokens.approveAd(makerKey!.privateKey, pool);
  const adTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
  await beforeConfirm?.({ adId: ad.body.adId, txHash: adTx, makerToken });
  expect((await call(world.api, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
  return { adId: ad.body.adId, routeId, makerToken };
}

/** An ad whose funding transaction is on its chain, not yet reported. */
export interface AdBeforeConfirm { adId: string; txHash: string; makerToken: string }

/**
 * The Maker's ad on anvil 31338 (WXLM by default) paid out on Stellar (XLM), and the Bridger's trade
 * up to the deposit of `amount` (order token units) into the Soroban OrderPortal (DEPOSITED), the
 * order binding `adAmount` (ad token units) for the ad side. Returns the parties' tokens too.
 */
export async function evmAdStellarDeposit(
  world: StellarTradeWorld, amount: bigint, tokens = wxlmForXlm(world), adAmount = amount,
  /** Runs once the trade is created, before the real deposit (tests of what a bad report changes). */
  beforeDeposit?: (trade: { tradeId: string; order: any; bridgerToken: string }) => Promise<void>,
): Promise<TradeRun & { makerToken: string; bridgerToken: string; depositTxHash: string }> {
  const { bridger } = world.evmParties;
  const bridgerToken = (await loginStellar(world.api, world.bridgerStellar)).body.tokens.access;
  const { adId, routeId, makerToken } = await createEvmAdForStellarOrders(world, tokens, adAmount * 5n);

  const created = await call(world.api, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: bridger.address }, bridgerToken);
  expect(created.status).toBe(200);
  const { tradeId, reqContractDetails: order } = created.body;
  expect(order).toMatchObject({
    chainKind: 'STELLAR', chainId: STELLAR, contractAddress: world.stellar.deployment.orderPortal, signerPublicKey: expect.stringMatching(/^G/),
  });
  expect(order.orderParams).toMatchObject({
    orderChainToken: tokens.orderToken, adChainToken: tokens.adToken, orderAmount: amount.toString(), adAmount: adAmount.toString(),
    bridger: world.bridgerStellar.publicKey(), orderRecipient: world.makerStellar.publicKey(), adRecipient: bridger.address,
  });

  await beforeDeposit?.({ tradeId, order, bridgerToken });
  // The Bridger deposits into the Soroban OrderPortal, authorising the pull as the transaction's source.
  const portalBefore = await tokens.orderBalance(world.stellar.deployment.orderPortal);
  const deposit = await submitStellar(world, world.bridgerStellar, 'createOrder', order, { orderParams: order.orderParams });
  expect(await tokens.orderBalance(world.stellar.deployment.orderPortal)).toBe(portalBefore + amount);
  expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, order.orderHash)).toEqual({ state: ORDER_STATE.deposited });
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: deposit.hash }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
  expect((await tradeOf(world, tradeId)).status).toBe('DEPOSITED');
  return { tradeId, adId, orderParams: order.orderParams, orderHash: order.orderHash, makerToken, bridgerToken, depositTxHash: deposit.hash };
}

/**
 * The whole trade with an EVM ad chain and a Stellar order chain: deposit in XLM on Soroban, the
 * lock and the Maker's unlock (paying the Bridger WXLM) on anvil, the Bridger's unlock on Soroban
 * (paying the Maker XLM, the proof verified by the host's BN254 pairing check); balances, order
 * states and nullifiers read back from both chains.
 */
export async function evmAdStellarOrderTrade(world: StellarTradeWorld, amount: bigint, tokens = wxlmForXlm(world), adAmount = amount): Promise<TradeRun> {
  const { makerKey, bridger } = world.evmParties;
  const run = await evmAdStellarDeposit(world, amount, tokens, adAmount);
  const { tradeId, orderHash, makerToken, bridgerToken } = run;

  const lock = await call(world.api, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
  expect(lock.status).toBe(200);
  expect(lock.body).toMatchObject({ chainId: AD_CHAIN, chainKind: 'EVM', orderHash });
  const lockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
  expect((await tradeOf(world, tradeId)).status).toBe('LOCKED');

  // The ad side first (docs/design.md "No party is left without a way out"): the Bridger's Stellar unlock waits for it.
  const early = await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHashStellar(world.bridgerStellar, orderHash) }, bridgerToken);
  expect(early.status).toBe(409);
  const makerUnlock = await eventually('the proof', () => call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, orderHash) }, makerToken), (r) => r.status !== 409, 120_000);
  expect(makerUnlock.status).toBe(200);
  expect(makerUnlock.body).toMatchObject({ chainId: AD_CHAIN, chainKind: 'EVM', contractAddress: world.evm.deployments[AD_CHAIN]!.adManager });
  const bridgerBefore = await tokens.adBalance(bridger.address);
  const adUnlockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
  // The AdManager paid the ad side's own number (adAmount, ad token units).
  expect(await tokens.adBalance(bridger.address)).toBe(bridgerBefore + adAmount);
  expect(await tradeOf(world, tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });

  // The Bridger's unlock on Soroban pays the Maker's Stellar account; the Stellar wallet signs SEP-53
  // the way Freighter's signMessage does: over the order hash's 0x hex text. Another text is refused.
  const wrongText = await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHashTextStellar(world.bridgerStellar, orderHash.toUpperCase()) }, bridgerToken);
  expect(wrongText.status).toBe(422);
  expect(wrongText.body.message).toEqual([expect.stringMatching(/^signature /)]);
  const bridgerUnlock = await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHashTextStellar(world.bridgerStellar, orderHash) }, bridgerToken);
  expect(bridgerUnlock.status).toBe(200);
  expect(bridgerUnlock.body).toMatchObject({ chainId: STELLAR, chainKind: 'STELLAR', contractAddress: world.stellar.deployment.orderPortal, nullifierHash: makerUnlock.body.nullifierHash });
  const makerBefore = await tokens.orderBalance(world.makerStellar.publicKey());
  const orderUnlock = await submitStellar(world, world.bridgerStellar, 'unlock', bridgerUnlock.body, { orderParams: bridgerUnlock.body.orderParams, proof: bridgerUnlock.body.proof });
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlock.hash }, bridgerToken)).status).toBe(200);
  // The Maker submitted nothing on Stellar: its balance grew by exactly the deposit (order token units).
  expect(await tokens.orderBalance(world.makerStellar.publicKey())).toBe(makerBefore + amount);
  expect(await tradeOf(world, tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
  expect(await adOf(world, run.adId)).toMatchObject({ poolAmount: (adAmount * 5n).toString(), availableAmount: (adAmount * 4n).toString(), lockedAmount: '0' });
  // Pushed as an EVM trade is: the whole stream, and both parties' feeds (the Bridger's under its Stellar wallet).
  await expectSettledTradePushed(world.api.url, tradeId, { orderAmount: amount.toString(), adAmount: adAmount.toString() }, [makerToken, bridgerToken]);

  const nullifier = makerUnlock.body.nullifierHash as string;
  expect(await evmOrder(world, AD_CHAIN, 'adManager', orderHash, nullifier)).toEqual({ state: ORDER_STATE.unlocked, nullifierSpent: true });
  expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, orderHash, nullifier)).toEqual({ state: ORDER_STATE.unlocked, nullifierSpent: true });
  // A replayed unlock is refused by the host: the nullifier is spent, the order no longer Deposited.
  await expect(submitStellar(world, world.bridgerStellar, 'unlock', bridgerUnlock.body, { orderParams: bridgerUnlock.body.orderParams, proof: bridgerUnlock.body.proof })).rejects.toThrow();
  return run;
}

/** The Stellar Maker's XLM ad of `pool` stroops on the Soroban AdManager for WXLM orders on anvil 31337, created and confirmed through HTTP. */
export async function createStellarAdForEvmOrders(
  world: StellarTradeWorld, pool: bigint,
  /** Runs once the ad's transaction is in a ledger, before the Maker reports it. */
  beforeConfirm?: (ad: AdBeforeConfirm) => Promise<void>,
): Promise<{ adId: string; routeId: string; makerToken: string }> {
  const makerToken = (await loginStellar(world.api, world.makerStellar)).body.tokens.access;
  const routeId = await routeBetween(world, STELLAR, world.stellar.deployment.xlm, ORDER_CHAIN);
  const ad = await call(world.api, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: world.evmParties.maker.address, fundAmount: pool.toString() }, makerToken);
  expect(ad.status).toBe(200);
  expect(ad.body).toMatchObject({ chainKind: 'STELLAR', contractAddress: world.stellar.deployment.adManager });
  const adTx = await submitStellar(world, world.makerStellar, 'createAd', ad.body);
  await beforeConfirm?.({ adId: ad.body.adId, txHash: adTx.hash, makerToken });
  expect((await call(world.api, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx.hash }, makerToken)).status).toBe(200);
  return { adId: ad.body.adId, routeId, makerToken };
}

/**
 * The Maker's XLM ad on Stellar paid out in WXLM on anvil 31337, and the Bridger's WXLM deposit
 * into the EVM OrderPortal (DEPOSITED).
 */
export async function stellarAdEvmDeposit(world: StellarTradeWorld, amount: bigint): Promise<TradeRun & { makerToken: string; bridgerToken: string }> {
  const { bridgerKey, maker, bridger } = world.evmParties;
  const bridgerToken = (await loginEvm(world.api, bridger)).body.tokens.access;
  const { adId, routeId, makerToken } = await createStellarAdForEvmOrders(world, amount * 5n);

  await approveWxlm(world, ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', amount);
  const created = await call(world.api, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: world.bridgerStellar.publicKey() }, bridgerToken);
  expect(created.status).toBe(200);
  const { tradeId, reqContractDetails: order } = created.body;
  expect(order).toMatchObject({ chainKind: 'EVM', chainId: ORDER_CHAIN, contractAddress: world.evm.deployments[ORDER_CHAIN]!.orderPortal });
  expect(order.orderParams).toMatchObject({
    orderChainToken: world.wxlm[ORDER_CHAIN], adChainToken: world.stellar.deployment.xlm, bridger: bridger.address,
    orderRecipient: maker.address, adCreator: world.makerStellar.publicKey(), adRecipient: world.bridgerStellar.publicKey(),
  });
  const depositTx = await world.chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
  expect((await tradeOf(world, tradeId)).status).toBe('DEPOSITED');
  return { tradeId, adId, orderParams: order.orderParams, orderHash: order.orderHash, makerToken, bridgerToken };
}

/** The Maker's lock on the Soroban AdManager, confirmed (LOCKED). */
export async function stellarLock(world: StellarTradeWorld, run: TradeRun & { makerToken: string }): Promise<void> {
  const lock = await call(world.api, 'POST', `/v1/trades/${run.tradeId}/lock`, undefined, run.makerToken);
  expect(lock.status).toBe(200);
  expect(lock.body).toMatchObject({ chainId: STELLAR, chainKind: 'STELLAR', contractAddress: world.stellar.deployment.adManager });
  const lockTx = await submitStellar(world, world.makerStellar, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
  expect((await call(world.api, 'POST', `/v1/trades/${run.tradeId}/confirm`, { txHash: lockTx.hash }, run.makerToken)).status).toBe(200);
  expect((await tradeOf(world, run.tradeId)).status).toBe('LOCKED');
  expect(await sorobanOrder(world, world.stellar.deployment.adManager, run.orderHash)).toEqual({ state: ORDER_STATE.locked });
}

/**
 * The whole trade with a Stellar ad chain and an EVM order chain: the ad, the lock and the Maker's
 * unlock (paying the Bridger XLM, the proof verified in the Soroban host) on Stellar, the deposit
 * and the Bridger's unlock (paying the Maker WXLM) on anvil; read back from both chains.
 */
export async function stellarAdEvmOrderTrade(world: StellarTradeWorld, amount: bigint): Promise<TradeRun> {
  const { bridgerKey, maker } = world.evmParties;
  const run = await stellarAdEvmDeposit(world, amount);
  const { tradeId, orderHash, makerToken, bridgerToken } = run;
  await stellarLock(world, run);

  const makerUnlock = await eventually('the proof', () => call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHashStellar(world.makerStellar, orderHash) }, makerToken), (r) => r.status !== 409, 120_000);
  expect(makerUnlock.status).toBe(200);
  expect(makerUnlock.body).toMatchObject({ chainId: STELLAR, chainKind: 'STELLAR', contractAddress: world.stellar.deployment.adManager });
  const bridgerBefore = await xlmBalance(world, world.bridgerStellar.publicKey());
  const adUnlock = await submitStellar(world, world.makerStellar, 'unlock', makerUnlock.body, { orderParams: makerUnlock.body.orderParams, proof: makerUnlock.body.proof });
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlock.hash }, makerToken)).status).toBe(200);
  // The Bridger submitted nothing on Stellar: paid exactly the amount.
  expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerBefore + amount);
  expect(await tradeOf(world, tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });

  const bridgerUnlock = await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, orderHash) }, bridgerToken);
  expect(bridgerUnlock.status).toBe(200);
  expect(bridgerUnlock.body).toMatchObject({ chainId: ORDER_CHAIN, chainKind: 'EVM' });
  const makerBefore = await wxlmBalance(world, ORDER_CHAIN, maker.address);
  const orderUnlockTx = await world.chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
  expect(await wxlmBalance(world, ORDER_CHAIN, maker.address)).toBe(makerBefore + amount);
  expect(await tradeOf(world, tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
  expect(await adOf(world, run.adId)).toMatchObject({ poolAmount: (amount * 5n).toString(), availableAmount: (amount * 4n).toString(), lockedAmount: '0' });
  // Pushed as an EVM trade is: the whole stream, and both parties' feeds (the Maker's under its Stellar wallet).
  await expectSettledTradePushed(world.api.url, tradeId, { orderAmount: amount.toString(), adAmount: amount.toString() }, [makerToken, bridgerToken]);
  const ad = await sorobanView(world, world.stellar.deployment.adManager, 'ad', [nativeToScVal(Buffer.from(run.orderParams.adId.replaceAll('-', '').padStart(64, '0'), 'hex'), { type: 'bytes' })]);
  expect(ad).toMatchObject({ available: amount * 4n, locked: 0n });

  const nullifier = makerUnlock.body.nullifierHash as string;
  expect(await sorobanOrder(world, world.stellar.deployment.adManager, orderHash, nullifier)).toEqual({ state: ORDER_STATE.unlocked, nullifierSpent: true });
  expect(await evmOrder(world, ORDER_CHAIN, 'orderPortal', orderHash, nullifier)).toEqual({ state: ORDER_STATE.unlocked, nullifierSpent: true });
  return run;
}

/** Moves the Stellar network's ledger time to `unixSeconds` (closing a ledger there); never backwards. */
export async function advanceLedgerTo(world: StellarTradeWorld, unixSeconds: bigint): Promise<number> {
  const { closeTime } = await world.stellar.node.closeLedger();
  const ahead = Number(unixSeconds) - closeTime;
  const now = ahead > 0 ? (await world.stellar.node.increaseTime(ahead)).closeTime : closeTime;
  world.ledgerAhead = now - Math.floor(Date.now() / 1000);
  return now;
}

/** Stroops a submitted transaction's source paid in fees (its result's feeCharged). */
export const feeCharged = (submitted: Submitted): bigint => BigInt(submitted.response.resultXdr.feeCharged().toString());

/**
 * Issue 33's absent Maker with a Stellar ad chain: the Maker's XLM ad and lock on the Soroban
 * AdManager, then nothing more from the Maker. The Bridger (signed in with its EVM wallet) asks
 * for the ad-side unlock (`side: "ad"`), submits it on Stellar from its own account (the contract
 * asks nobody's authorisation and pays the order's ad recipient), confirms it, then takes the
 * order side on anvil: SETTLED, each party paid exactly.
 */
export async function stellarAdBridgerAlone(world: StellarTradeWorld, amount: bigint): Promise<TradeRun> {
  const { bridgerKey, maker } = world.evmParties;
  const run = await stellarAdEvmDeposit(world, amount);
  const { tradeId, orderHash, bridgerToken } = run;
  await stellarLock(world, run);
  expect(await tradeOf(world, tradeId)).toMatchObject({ unlockDue: 'MAKER', unlockableBy: ['MAKER', 'BRIDGER'] });

  const signature = signOrderHash(bridgerKey!.privateKey, orderHash);
  const adSide = await eventually('the proof', () => call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature, side: 'ad' }, bridgerToken), (r) => r.status !== 409, 120_000);
  expect(adSide.status).toBe(200);
  expect(adSide.body).toMatchObject({ chainId: STELLAR, chainKind: 'STELLAR', contractAddress: world.stellar.deployment.adManager });
  // The order side still waits for the ad side.
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature }, bridgerToken)).status).toBe(409);
  const bridgerBefore = await xlmBalance(world, world.bridgerStellar.publicKey());
  const adUnlock = await submitStellar(world, world.bridgerStellar, 'unlock', adSide.body, { orderParams: adSide.body.orderParams, proof: adSide.body.proof });
  // The Bridger's own account submitted it: paid the amount, less the fee it paid.
  expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerBefore + amount - feeCharged(adUnlock));
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlock.hash }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
  expect(await tradeOf(world, tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false, unlockDue: 'BRIDGER' });

  const orderSide = await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature }, bridgerToken);
  expect(orderSide.status).toBe(200);
  expect(orderSide.body).toMatchObject({ chainId: ORDER_CHAIN, chainKind: 'EVM' });
  const makerBefore = await wxlmBalance(world, ORDER_CHAIN, maker.address);
  const orderUnlockTx = await world.chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', orderSide.body, orderSide.body);
  expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
  expect(await wxlmBalance(world, ORDER_CHAIN, maker.address)).toBe(makerBefore + amount);
  expect(await tradeOf(world, tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true, unlockDue: null });
  expect(await adOf(world, run.adId)).toMatchObject({ poolAmount: (amount * 5n).toString(), availableAmount: (amount * 4n).toString(), lockedAmount: '0' });
  const nullifier = adSide.body.nullifierHash as string;
  expect(await sorobanOrder(world, world.stellar.deployment.adManager, orderHash, nullifier)).toEqual({ state: ORDER_STATE.unlocked, nullifierSpent: true });
  expect(await evmOrder(world, ORDER_CHAIN, 'orderPortal', orderHash, nullifier)).toEqual({ state: ORDER_STATE.unlocked, nullifierSpent: true });
  return run;
}
