import { Contract, ContractFactory, Wallet, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidToBytes32 } from '../../chains/address.ts';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import type { OrderParams } from '../../chains/order.ts';
import { loadDevnetArtifacts } from '../../contracts/evm/artifacts.ts';
import { importRegistry } from '../../registry/import.ts';
import { AD_CHAIN, devnetClient, eventually, mined, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startOrchestratedService, type OrchestratedService } from '../support/scene.ts';
import { call, loginEvm } from '../support/wallets.ts';

/**
 * Issue 20, item 3 on the two-chain devnet, on each orchestrator: a route between two tokens of one asset (USD) with
 * different decimals, the Maker's ad in an 18-decimal DUSD on chain 31338, the Bridger's deposit in
 * the devnet's 6-decimal TUSD on chain 31337. A 10-dollar deposit must unlock 10 dollars (10^19
 * DUSD base units), not 10^7 base units (1:1 in base units, the old settlement), and nobody can make
 * either contract move the other chain's number.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
const DOLLARS = 10n;
const TUSD = 10n ** 6n; // base units of one dollar on the order chain
const DUSD = 10n ** 18n; // and on the ad chain
const POOL = 1000n * DUSD;

describeOnEachOrchestrator('a route between two decimals of one asset', (orchestrator) => {
  let stack: OrchestratedService;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;
  let dusd: Contract;

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  const adOf = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;
  const dusdOf = async (who: string) => (await dusd.getFunction('balanceOf')(who)) as bigint;

  /** Why a contract call would revert on chain (eth_call on the latest block), by its custom error's name. */
  async function revertOf(contract: Contract, functionName: string, args: unknown[]): Promise<string> {
    try {
      await contract.getFunction(functionName).staticCall(...args);
      return 'succeeds';
    } catch (error: any) {
      const data: string | undefined = error?.data ?? error?.info?.error?.data;
      return (data && contract.interface.parseError(data)?.name) ?? `fails: ${error?.shortMessage ?? error?.message}`;
    }
  }

  beforeAll(async () => {
    stack = await startOrchestratedService(orchestrator, { DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0' });
    service = stack.service;
    devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
    makerToken = (await loginEvm(service, maker)).body.tokens.access;
    bridgerToken = (await loginEvm(service, bridger)).body.tokens.access;

    // An 18-decimal USD token on the ad chain, registered as the devnet's TUSD's asset, and the route.
    const artifacts = await loadDevnetArtifacts();
    const owner = new Wallet(makerKey!.privateKey, devnet.provider(AD_CHAIN));
    const factory = new ContractFactory(artifacts.testErc20.abi as InterfaceAbi, artifacts.testErc20.bytecode, owner);
    dusd = (await (await factory.deploy('Dollar 18', 'DUSD', 18)).waitForDeployment()) as unknown as Contract;
    const dusdAddress = await dusd.getAddress();
    await mined(dusd.getFunction('mint')(maker.address, POOL));
    const tusdA = service.devnet!.deployments[ORDER_CHAIN]!.testErc20;
    await importRegistry(service.knex, {
      tokens: [{ chainId: AD_CHAIN, symbol: 'DUSD', name: 'Dollar 18', address: dusdAddress, decimals: 18, kind: 'ERC20', asset: 'USD' }],
      routes: [{ adToken: { chainId: AD_CHAIN, address: dusdAddress }, orderToken: { chainId: ORDER_CHAIN, address: tusdA } }],
    });
    const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}`);
    routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'DUSD' && r.orderToken.symbol === 'TUSD').id;
  }, 240_000);

  afterAll(async () => {
    devnet?.close();
    await stack?.stop();
  });

  describe('a whole trade between a 6-decimal and an 18-decimal token of one asset', () => {
    it('settles at the right price on both chains, and neither contract takes an order whose amounts were changed', async () => {
      // The Maker's ad: 1,000 DUSD.
      const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: POOL.toString() }, makerToken);
      expect(created.status).toBe(200);
      await mined(dusd.connect(new Wallet(makerKey!.privateKey, devnet.provider(AD_CHAIN))).getFunction('approve')(service.devnet!.deployments[AD_CHAIN]!.adManager, POOL));
      const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
      expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
      const adId: string = created.body.adId;

      // The Bridger orders 10 dollars: 10^7 TUSD base units deposited, 10^19 DUSD base units to receive.
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', DOLLARS * TUSD);
      const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: (DOLLARS * TUSD).toString(), bridgerDstAddress: bridger.address }, bridgerToken);
      expect(opened.status).toBe(200);
      const { tradeId, reqContractDetails: order } = opened.body;
      const params: OrderParams = order.orderParams;
      expect(params).toMatchObject({ amount: (DOLLARS * TUSD).toString(), orderAmount: (DOLLARS * TUSD).toString(), adAmount: (DOLLARS * DUSD).toString() });
      expect(await trade(tradeId)).toMatchObject({ status: 'PENDING', amount: (DOLLARS * TUSD).toString() });
      expect(await adOf(adId)).toMatchObject({ availableAmount: (POOL - DOLLARS * DUSD).toString() });

      const bridgerTusdBefore = await devnet.balanceOf(ORDER_CHAIN, bridger.address);
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: params });
      expect(await devnet.balanceOf(ORDER_CHAIN, bridger.address)).toBe(bridgerTusdBefore - DOLLARS * TUSD);
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);

      // The lock: the Maker's signed request does not lock the order at 1:1 in base units (nor at any other amount).
      const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
      expect(lock.status).toBe(200);
      const manager = devnet.contract(AD_CHAIN, 'adManager', makerKey!.privateKey);
      for (const adAmount of [params.orderAmount, (DOLLARS * DUSD - 1n).toString()]) {
        const tampered = evmContractCall('lockForOrder', lock.body, { orderParams: { ...params, adAmount } });
        expect(await revertOf(manager, tampered.functionName, tampered.args), `lock of ${adAmount}`).toBe('InvalidSignature');
      }
      const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: params });
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
      const onChainAd = await manager.getFunction('ads')(uuidToBytes32(adId));
      expect([onChainAd.available, onChainAd.locked]).toEqual([POOL - DOLLARS * DUSD, DOLLARS * DUSD]);
      expect(await adOf(adId)).toMatchObject({ availableAmount: (POOL - DOLLARS * DUSD).toString(), lockedAmount: (DOLLARS * DUSD).toString() });
      // The books audit compares the ad's books with the AdManager in the ad token's units: no drift.
      expect((await service.container.runAudit()).drifts).toEqual([]);

      // The ad-side unlock pays the Bridger 10 DUSD; a copy claiming more (the Bridger's wish) is refused.
      const makerUnlock = await eventually('the proof', () =>
        call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken), (r) => r.status !== 409);
      expect(makerUnlock.status).toBe(200);
      const greedy = evmContractCall('unlock', makerUnlock.body, { orderParams: { ...params, adAmount: (100n * DUSD).toString() }, proof: makerUnlock.body.proof });
      expect(await revertOf(devnet.contract(AD_CHAIN, 'adManager', bridgerKey!.privateKey), greedy.functionName, greedy.args)).toBe('InvalidSignature');
      const bridgerDusdBefore = await dusdOf(bridger.address);
      const adUnlockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
      expect(await dusdOf(bridger.address)).toBe(bridgerDusdBefore + DOLLARS * DUSD);

      // The order-side unlock pays the Maker the 10 TUSD deposited; a copy claiming the ad amount is refused.
      const bridgerUnlock = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
      expect(bridgerUnlock.status).toBe(200);
      const portal = devnet.contract(ORDER_CHAIN, 'orderPortal', makerKey!.privateKey);
      const drain = evmContractCall('unlock', bridgerUnlock.body, { orderParams: { ...params, amount: params.adAmount, orderAmount: params.adAmount }, proof: bridgerUnlock.body.proof });
      expect(await revertOf(portal, drain.functionName, drain.args)).toBe('InvalidSignature');
      const makerTusdBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
      const orderUnlockTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
      expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerTusdBefore + DOLLARS * TUSD);

      // Settled at 1 dollar = 1 dollar; the books (in DUSD base units) equal the AdManager's.
      expect(await trade(tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
      const settledAd = await manager.getFunction('ads')(uuidToBytes32(adId));
      expect([settledAd.available, settledAd.locked]).toEqual([POOL - DOLLARS * DUSD, 0n]);
      expect(await adOf(adId)).toMatchObject({ poolAmount: POOL.toString(), availableAmount: (POOL - DOLLARS * DUSD).toString(), lockedAmount: '0' });
      expect((await service.container.runAudit()).drifts).toEqual([]);
    }, 180_000); // a whole trade with a proof: over a minute on a loaded 2-core machine

    it('refuses with 422 naming amount a DUSD deposit that does not convert into whole TUSD base units (18 -> 6), and a route to ETH the registry cannot price', async () => {
      const dusdAddress = await dusd.getAddress();
      const tusdA = service.devnet!.deployments[ORDER_CHAIN]!.testErc20;
      await importRegistry(service.knex, { routes: [{ adToken: { chainId: ORDER_CHAIN, address: tusdA }, orderToken: { chainId: AD_CHAIN, address: dusdAddress } }] });
      const routes = await call(service, 'GET', `/v1/routes?adChainId=${ORDER_CHAIN}&orderChainId=${AD_CHAIN}`);
      const reverse = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'DUSD').id;
      const created = await call(service, 'POST', '/v1/ads/create', { routeId: reverse, creatorDstAddress: maker.address, fundAmount: (100n * TUSD).toString() }, makerToken);
      expect(created.status).toBe(200);
      await devnet.approve(ORDER_CHAIN, makerKey!.privateKey, 'adManager', 100n * TUSD);
      const adTx = await devnet.send(ORDER_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
      expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
      await mined(dusd.getFunction('mint')(bridger.address, DUSD));
      await mined(dusd.connect(new Wallet(bridgerKey!.privateKey, devnet.provider(AD_CHAIN))).getFunction('approve')(service.devnet!.deployments[AD_CHAIN]!.orderPortal, DUSD));

      const inexact = await call(service, 'POST', '/v1/trades/create', { adId: created.body.adId, routeId: reverse, amount: (10n ** 12n + 1n).toString(), bridgerDstAddress: bridger.address }, bridgerToken);
      expect(inexact.status).toBe(422);
      expect(inexact.body.message).toEqual([expect.stringMatching(/^amount 1000000000001 DUSD base units do not convert exactly into TUSD base units on this route \(1000000000000 : 1\): use a multiple of 1000000000000$/)]);
      expect(await adOf(created.body.adId)).toMatchObject({ availableAmount: (100n * TUSD).toString() });
      const exact = await call(service, 'POST', '/v1/trades/create', { adId: created.body.adId, routeId: reverse, amount: (3n * 10n ** 12n).toString(), bridgerDstAddress: bridger.address }, bridgerToken);
      expect(exact.status).toBe(200);
      expect(exact.body.reqContractDetails.orderParams).toMatchObject({ orderAmount: '3000000000000', adAmount: '3' });
      expect(await adOf(created.body.adId)).toMatchObject({ availableAmount: (100n * TUSD - 3n).toString() });

      const eth = '0x0000000000000000000000000000000000000000';
      const error = await importRegistry(service.knex, {
        routes: [{ adToken: { chainId: AD_CHAIN, address: dusdAddress }, orderToken: { chainId: ORDER_CHAIN, address: eth } }],
      }).catch((e) => e);
      expect(error.problems).toEqual(['routes.0: cannot be priced: its tokens are different assets (DUSD USD, ETH ETH) and it states no rate']);
    });
  });
});
