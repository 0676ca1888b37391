import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Address, authorizeEntry, Keypair, nativeToScVal, Operation } from '@stellar/stellar-sdk';
import { sendStellarTransaction, signUnlockMessage, stellarTransaction, stellarTransactionWithFeePayer, unlockMessage } from '../../client/stellar.js';
import { orderHashOf } from '../../client/order.js';
import { AD_CHAIN, eventually, signOrderHash } from '../support/devnet-client.ts';
import { fund, submitOperation } from '../../devnet/stellar/client.ts';
import { uuidToBytes32 } from '../../chains/address.ts';
import { mintTestToken } from '../../devnet/stellar/deploy.ts';
import { stellarContractCall } from '../../chains/stellar/call-args.ts';
import { submitStarved } from '../support/soroban-network.ts';
import { call, loginEvm, loginStellar } from '../support/wallets.ts';
import { startRpcFaultProxy, type FaultMode, type RpcFaultProxy } from '../support/rpc-fault-proxy.ts';
import { evmLies, stellarLies } from '../support/provider-lies.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startOrchestratedService, watchingLogger, type OrchestratedService } from '../support/scene.ts';
import {
  STELLAR, advanceLedgerTo, createEvmAdForStellarOrders, createStellarAdForEvmOrders, evmAdStellarDeposit, evmAdStellarOrderTrade, feeCharged, ORDER_STATE, prepareStellarTrades, sorobanOrder, sorobanView,
  approveWxlm, stellarAdBridgerAlone, type AdBeforeConfirm, stellarAdEvmDeposit, wxlmForXlm, stellarAdEvmOrderTrade, stellarLock, submitStellarTimeout, tusdForTusd, xlmBalance, type StellarTradeWorld, type TradeRun,
} from '../support/stellar-trades.ts';

/**
 * Whole trades with a Stellar side through HTTP on each orchestrator (embedded; Temporal with its
 * worker and prover processes, where each whole trade's workflow is also indexed SETTLED), on the devnet
 * `npm start` runs (anvil 31337 and 31338, the local Soroban network as chain 148 with the
 * contracts' wasm): an EVM ad chain with a Stellar order chain (the deposit in XLM), and a Stellar
 * ad chain with an EVM order chain; the proof verified by the Soroban host's pairing check. Then
 * the hash time-lock's ways out on Soroban, on the network's ledger clock moved forward: the
 * Bridger's refund after refundTime and the Maker's lock release after lockExpiry (last: the
 * ledger is hours ahead of the service's clock afterwards, no new order fits its time checks).
 */

describeOnEachOrchestrator('trades with a Stellar side', (orchestrator) => {
  let stack: OrchestratedService;
  let service: TestService;
  let world: StellarTradeWorld;
  /**
   * What no log line of the service (and, on Temporal, of its worker and prover) may hold: the
   * providers' made-up API keys, their key-bearing path, and each faulty-provider proxy's host:port.
   */
  const secrets: string[] = ['key-of-', '/v3/'];
  const naming = (line: string) => secrets.some((secret) => line.includes(secret));

  beforeAll(async () => {
    stack = await startOrchestratedService(orchestrator, { DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0', METRICS_PORT: '0',
      // Every request that finds an ad taken re-reads its reservations: the test below checks what a re-read leaves alone.
      UNBACKED_RESERVATIONS_RECHECK_SECONDS: '0',
    }, true, { watch: naming });
    service = stack.service;
    const devnet = service.devnet!;
    world = await prepareStellarTrades({ api: service, knex: service.knex, evm: devnet, stellar: devnet.stellar! });
  }, 5 * 60_000);

  afterAll(async () => {
    world?.chain.close();
    await stack?.stop();
  });

  /** A whole trade with a proof; the first of a run also loads the proving key (over a minute at a load average of 40). */
const WHOLE_TRADE_MS = 180_000;

/** Temporal only: the trade's workflow ran there to the end, indexed SETTLED. */
  const expectIndexedSettled = async (tradeId: string) => {
    if (!stack.temporal) return;
    expect(await eventually('indexed SETTLED', () => stack.temporal!.indexedStatus(tradeId), (status) => status === 'SETTLED', 15_000)).toBe('SETTLED');
  };

  describe('a whole trade with a Stellar side', () => {
    // On Temporal these two trades (each way once) run through faulty providers below, indexed SETTLED
    // there: one run of each per orchestrator keeps the file's time.
    if (orchestrator === 'embedded') {
      it('settles with an EVM ad chain and a Stellar order chain: XLM deposited on Soroban, WXLM to the Bridger, XLM to the Maker', async () => {
        await evmAdStellarOrderTrade(world, 10_000_000n);
      }, WHOLE_TRADE_MS);
    }

    it('settles a SEP-41 deposit on Soroban against a 6-decimal ad on anvil: each chain moves its own number (1 TUSD: 10,000,000 base units on Stellar, 1,000,000 on anvil)', async () => {
      const deposit = 10_000_000n; // 1 TUSD at 7 decimals
      await mintTestToken(world.server, world.passphrase, world.stellar.deployment.testToken, world.bridgerStellar.publicKey(), deposit);
      const run = await evmAdStellarOrderTrade(world, deposit, tusdForTusd(world), 1_000_000n);
      expect(run.orderParams).toMatchObject({ orderAmount: '10000000', adAmount: '1000000' });
    }, WHOLE_TRADE_MS);

    if (orchestrator === 'embedded') {
      it('settles with a Stellar ad chain and an EVM order chain: the Maker\'s XLM ad pays the Bridger on Soroban, WXLM to the Maker', async () => {
        await stellarAdEvmOrderTrade(world, 10_000_000n);
      }, WHOLE_TRADE_MS);
    }

    it('settles with a Maker who locks on Soroban and never unlocks: the Bridger takes the ad-side unlock (side "ad") from its own Stellar account, then the order side on anvil; zero drift', async () => {
      await stellarAdBridgerAlone(world, 4_000_000n);
      expect(await service.container.runAudit()).toMatchObject({ drifts: [], unchecked: 0 });
    }, WHOLE_TRADE_MS);
  });

  describe('each chain read through two honest providers and one of each kind of failure (down, slow, 100 blocks behind, lying)', () => {
    const FAULTS: FaultMode[] = ['down', 'slow', 'behind', 'lie'];
    const proxies: RpcFaultProxy[] = [];
    let faulty: Record<string, Partial<Record<FaultMode, RpcFaultProxy>>>;
    /** Each chain's six providers as registered, and one of its honest pair. */
    const six: Record<string, string[]> = {};
    const honestOf: Record<string, RpcFaultProxy> = {};
    let direct: Array<{ chain_id: string; rpc_url: string | null; rpc_urls: string[] | null; rpc_quorum: number | null }>;
    // allChains() reads the registry again at once (a lookup of a known chain would wait out the cache's 10 s).
    const registryReads = (chainId: string, urls: string[]) => eventually(`the registry read again for chain ${chainId}`,
      async () => (await service.container.registryCache.allChains()).find((chain) => chain.chainId === chainId),
      (chain) => JSON.stringify(chain?.rpcUrls ?? [chain?.rpcUrl]) === JSON.stringify(urls), 30_000);
    const useProviders = async (chainId: string, urls: string[], quorum: number | null = null) => {
      await service.knex('chains').where({ chain_id: chainId }).update({ rpc_url: urls[0], rpc_urls: urls, rpc_quorum: quorum });
      await registryReads(chainId, urls);
    };
    const started = async (target: string, mode: FaultMode, apiKey: string, delayMs = 0) => {
      const proxy = await startRpcFaultProxy(target, { mode, apiKey, delayMs });
      proxies.push(proxy);
      secrets.push(new URL(proxy.url).host);
      return proxy;
    };

    beforeAll(async () => {
      direct = await service.knex('chains').select('chain_id', 'rpc_url', 'rpc_urls', 'rpc_quorum');
      const devnet = service.devnet!;
      // Both anvil chains (the ad chain of one trade is the order chain of the other) and the Stellar network.
      const targets: Record<string, string> = { ...devnet.rpcUrls, [STELLAR]: devnet.stellar!.node.rpcUrl };
      faulty = {};
      for (const [chainId, target] of Object.entries(targets)) {
        // The honest pair a little farther away (150 ms): the liar, as fast as the node, ranks first and is
        // among the two asked for every fact, so its lies are told on every chain.
        const all = await Promise.all([...FAULTS, 'honest' as const, 'honest' as const].map((mode, i) => started(target, mode, `key-of-${chainId}`, i < FAULTS.length ? 0 : 150)));
        faulty[chainId] = Object.fromEntries(FAULTS.map((fault, i) => [fault, all[i]!]));
        six[chainId] = all.map((proxy) => proxy.url);
        honestOf[chainId] = all[FAULTS.length]!;
        Object.assign(faulty[chainId].lie!.lies, chainId === STELLAR ? stellarLies : evmLies);
        // The faulty ones first: each is asked before it has shown what it is. Two alike decide a fact: the honest pair.
        await useProviders(chainId, all.map((proxy) => proxy.url), 2);
      }
    }, 120_000);

    afterAll(async () => {
      for (const row of direct ?? []) {
        await service.knex('chains').where({ chain_id: row.chain_id }).update({ rpc_url: row.rpc_url, rpc_urls: row.rpc_urls, rpc_quorum: row.rpc_quorum });
        await registryReads(row.chain_id, row.rpc_urls ?? [row.rpc_url!]);
      }
      await Promise.all(proxies.map((proxy) => proxy.close()));
    });

    it('settles whole trades on both chain kinds (EVM ad and Stellar order chain, then the reverse), each fault met on every chain; no lie is acted upon, the books equal the chains, no provider URL in a log line or metric', async () => {
      const evmAd = await evmAdStellarOrderTrade(world, 10_000_000n);
      const stellarAd = await stellarAdEvmOrderTrade(world, 10_000_000n);
      await expectIndexedSettled(evmAd.tradeId);
      await expectIndexedSettled(stellarAd.tradeId);
      for (const [chainId, byFault] of Object.entries(faulty)) {
        for (const fault of FAULTS) expect(byFault[fault]!.counts.modes[fault] ?? 0, `requests to the ${fault} provider of chain ${chainId}`).toBeGreaterThan(0);
        expect(byFault.lie!.counts.lies, `lies told on chain ${chainId}`).toBeGreaterThan(0);
      }
      // Usable: the honest pair, the slow one and the liar (whose lies only the comparison catches); not the
      // one down, nor the one 100 blocks behind.
      const health = await (await service.request('/health')).json();
      for (const chainId of Object.keys(faulty)) expect(health.checks.chains[chainId], `chain ${chainId} on /health`).toMatchObject({ status: 'ok', usable: 4, quorum: 2 });
      expect(await service.container.runAudit()).toMatchObject({ drifts: [], unchecked: 0 });
      const metrics = [await service.container.metrics.metrics()];
      if (stack.temporal) {
        // The worker and the prover (the tree sync of each proof reads the order chain) read through the six providers too.
        const beside = await Promise.all([stack.temporal.worker, ...stack.temporal.provers].map(async (p) => (await fetch(p.metricsUrl)).text()));
        expect(beside.join('\n'), 'the worker or prover read a chain through the six providers').toMatch(/relayer_rpc_requests_total\{chain="\d+",provider="127\.0\.0\.1#5"/);
        metrics.push(...beside);
      }
      // Every chain's liar caught by the comparison (in the API, or on Temporal in the worker), on each chain kind.
      for (const chainId of Object.keys(faulty)) {
        expect(metrics.join('\n'), `disagreements on chain ${chainId}`).toMatch(new RegExp(`relayer_rpc_disagreements_total\\{chain="${chainId}",method="[a-zA-Z]+",resolved="true"\\} [1-9]`));
      }
      for (const text of metrics) for (const secret of secrets) expect(text).not.toContain(secret);
      expect(stack.watched(), 'log lines naming a provider URL').toEqual([]);
    }, 2 * WHOLE_TRADE_MS);

    // What the API decides on a report is the same on either orchestrator: one run is enough.
    if (orchestrator === 'embedded') {
      it('does not act on a fact its providers disagree on: an ad\'s report answers 503 CHAIN_FACTS_DISAGREE and changes nothing, on an anvil chain and on Stellar; once they agree, the same report is accepted', async () => {
        // The chain read through the liar and one honest provider, both required to agree, while the Maker reports.
        const disagreeing = (chainId: string) => async ({ adId, txHash, makerToken }: AdBeforeConfirm) => {
          await useProviders(chainId, [faulty[chainId]!.lie!.url, honestOf[chainId]!.url], 2);
          const before = (await call(world.api, 'GET', `/v1/ads/${adId}`)).body;
          const lies = faulty[chainId]!.lie!.counts.lies;
          const report = await call(world.api, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, makerToken);
          expect(report.status, `chain ${chainId}`).toBe(503);
          expect(report.body).toMatchObject({ statusCode: 503, code: 'CHAIN_FACTS_DISAGREE' });
          expect(faulty[chainId]!.lie!.counts.lies).toBeGreaterThan(lies);
          expect((await call(world.api, 'GET', `/v1/ads/${adId}`)).body).toEqual(before);
          // The six again: the helper's own report is accepted (200).
          await useProviders(chainId, six[chainId]!, 2);
        };
        await createEvmAdForStellarOrders(world, wxlmForXlm(world), 1_000_000n, disagreeing(AD_CHAIN));
        await createStellarAdForEvmOrders(world, 5_000_000n, disagreeing(STELLAR));
        expect(stack.watched(), 'log lines naming a provider URL').toEqual([]);
      }, WHOLE_TRADE_MS);
    }

    it('with a chain\'s only provider down: /health says which chain is degraded, every read is served, what needs the chain answers 503 CHAIN_UNAVAILABLE with Retry-After; back up, it recovers by itself', async () => {
      const { adId, makerToken } = await createEvmAdForStellarOrders(world, wxlmForXlm(world), 1_000_000n);
      const down = await started(service.devnet!.rpcUrls[AD_CHAIN]!, 'down', `key-of-${AD_CHAIN}`);
      await useProviders(AD_CHAIN, [down.url]);
      const health = await (await service.request('/health')).json();
      expect(health).toMatchObject({ status: 'degraded', checks: { db: 'ok', chains: { [AD_CHAIN]: { status: 'degraded', usable: 0, quorum: 1 } } } });
      for (const path of ['/v1/chains', '/v1/routes', '/v1/ads', `/v1/ads/${adId}`]) {
        expect((await service.request(path)).status, path).toBe(200);
      }
      const confirm = await service.request(`/v1/ads/${adId}/confirm`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${makerToken}` }, body: JSON.stringify({ txHash: `0x${'ab'.repeat(32)}` }),
      });
      expect(confirm.status).toBe(503);
      expect(confirm.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await confirm.json()).toMatchObject({ statusCode: 503, code: 'CHAIN_UNAVAILABLE' });
      down.mode = 'honest';
      await eventually('the chain back', async () => (await (await service.request('/health')).json()).status, (status) => status === 'ok', 30_000);
      expect(stack.watched(), 'log lines naming a provider URL').toEqual([]);
    }, WHOLE_TRADE_MS);

    // Start-up is the same API process on either orchestrator: one run is enough.
    if (orchestrator === 'embedded') {
      it('starts with a chain\'s only provider down, an anvil chain and the Stellar network (no exit, no wait), and serves every read; /health names both degraded; back up, they recover by themselves', async () => {
        const down: Record<string, RpcFaultProxy> = {
          [AD_CHAIN]: await started(service.devnet!.rpcUrls[AD_CHAIN]!, 'down', 'key-of-a-cold-start'),
          [STELLAR]: await started(service.devnet!.stellar!.node.rpcUrl, 'down', 'key-of-a-cold-start'),
        };
        const logs = watchingLogger(naming);
        const copy = (table: string) => service.knex(table).select('*');
        const cold = await startTestService({ METRICS_PORT: '0' }, {
          logger: logs.logger,
          // The scene's registry, its ad chain and its Stellar network each read through one provider that is down.
          beforeStart: async (knex) => {
            await knex('chains').insert((await copy('chains')).map((row) => {
              const only = down[row.chain_id]?.url;
              return only ? { ...row, rpc_url: only, rpc_urls: [only], rpc_quorum: null } : row;
            }));
            await knex('tokens').insert(await copy('tokens'));
            await knex('routes').insert(await copy('routes'));
          },
        });
        try {
          const health = await (await cold.request('/health')).json();
          expect(health).toMatchObject({ status: 'degraded', checks: { db: 'ok', chains: {
            [AD_CHAIN]: { status: 'degraded', usable: 0, quorum: 1 }, [STELLAR]: { status: 'degraded', usable: 0, quorum: 1 },
          } } });
          for (const [chainId, proxy] of Object.entries(down)) expect(proxy.counts.modes.down ?? 0, `requests to chain ${chainId}'s provider down`).toBeGreaterThan(0);
          const routes = await (await cold.request(`/v1/routes?adChainId=${AD_CHAIN}`)).json();
          expect(routes.data.length).toBeGreaterThan(0);
          for (const path of ['/v1/chains', `/v1/chains/${AD_CHAIN}`, `/v1/routes/${routes.data[0].id}`, '/v1/ads', `/v1/ads?adChainId=${AD_CHAIN}`, '/v1/trades/all', '/openapi.json']) {
            expect((await cold.request(path)).status, path).toBe(200);
          }
          for (const proxy of Object.values(down)) proxy.mode = 'honest';
          await eventually('the chains back', async () => (await (await cold.request('/health')).json()).status, (status) => status === 'ok', 30_000);
          expect(logs.watched, 'log lines naming a provider URL').toEqual([]);
        } finally {
          await cold.close();
        }
      }, WHOLE_TRADE_MS);
    }
  });

  describe('reported Stellar transactions that prove no deposit of this trade', () => {
    it('are refused with 422 and change nothing: a hash the network never saw, a deposit that failed in its ledger, another trade\'s deposit', async () => {
      const other = await evmAdStellarDeposit(world, 2_000_000n);
      await evmAdStellarDeposit(world, 3_000_000n, undefined, undefined, async ({ tradeId, order, bridgerToken }) => {
        const report = (txHash: string) => call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash }, bridgerToken);
        const failed = await submitStarved(world.server, world.passphrase, world.bridgerStellar, stellarContractCall('createOrder', order, { orderParams: order.orderParams }));
        for (const txHash of ['ab'.repeat(32), failed, other.depositTxHash]) {
          const res = await report(txHash);
          expect(res.status, txHash).toBe(422);
          expect(res.body).toMatchObject({ statusCode: 422, error: expect.any(String) });
        }
        expect((await call(world.api, 'GET', `/v1/trades/${tradeId}`)).body.status).toBe('PENDING');
        expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, order.orderHash)).toEqual({ state: ORDER_STATE.none });
      });
      // evmAdStellarDeposit then deposits with the same signed request and confirms it (200, DEPOSITED):
      // the failed transaction consumed neither its authToken nor the Bridger's XLM.
    });
  });

  describe('a whole trade driven by the client package\'s ./stellar helpers (issue 29)', () => {
    it('settles: the deposit built with a fee payer and the Bridger\'s authorizeEntry, the unlock from the Bridger\'s own account after a Freighter-style text signature; the network read from GET /v1/chains', async () => {
      const amount = 6_000_000n;
      const tokens = wxlmForXlm(world);
      const { makerKey, bridger } = world.evmParties;
      const bridgerKp = world.bridgerStellar;
      const feePayer = Keypair.random();
      await fund(world.server, feePayer.publicKey());
      // What a dApp reads first: the chain's RPC and passphrase, published by the operator (the devnet publishes its own RPC).
      const chain = (await call(world.api, 'GET', '/v1/chains/148')).body;
      expect(chain).toMatchObject({ kind: 'STELLAR', networkPassphrase: world.passphrase, publicRpcUrl: world.stellar.node.rpcUrl });
      const network = { rpc: chain.publicRpcUrl as string, networkPassphrase: chain.networkPassphrase as string };

      const { adId, routeId, makerToken } = await createEvmAdForStellarOrders(world, tokens, amount * 5n);
      const bridgerToken = (await loginStellar(world.api, bridgerKp)).body.tokens.access;
      const created = await call(world.api, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: bridger.address }, bridgerToken);
      expect(created.status).toBe(200);
      const { tradeId, reqContractDetails: order } = created.body;
      // The create answer lost, the Bridger reads the same Soroban deposit request again (signerPublicKey included).
      const again = (await call(world.api, 'GET', `/v1/trades/${tradeId}/deposit-request`, undefined, bridgerToken)).body;
      expect({ ...again.reqContractDetails, timeToExpire: order.timeToExpire }).toEqual(order);

      // The deposit: the fee payer is the source and pays the fee; the Bridger only authorises its create_order (and the pull it makes).
      const bridgerBefore = await tokens.orderBalance(bridgerKp.publicKey());
      const payerBefore = await tokens.orderBalance(feePayer.publicKey());
      const deposit = await stellarTransactionWithFeePayer('createOrder', order, {
        feePayer: feePayer.publicKey(), caller: bridgerKp.publicKey(),
        authorize: (entry, validUntil) => authorizeEntry(entry, bridgerKp, validUntil, network.networkPassphrase),
      }, network);
      deposit.sign(feePayer);
      const sentDeposit = await sendStellarTransaction(deposit, network);
      expect(await tokens.orderBalance(bridgerKp.publicKey())).toBe(bridgerBefore - amount); // exactly the deposit: no fee
      expect(await tokens.orderBalance(feePayer.publicKey())).toBeLessThan(payerBefore);
      // Before anyone confirms it, the signed-in Bridger finds its trade by the deposit's hash (sent by the fee
      // payer: the Soroban OrderPortal's event names the order); nothing is recorded by finding it.
      const unconfirmed = await call(world.api, 'GET', `/v1/trades/all?txHash=${sentDeposit.hash}`, undefined, bridgerToken);
      expect(unconfirmed.body.data.map((t: { id: string }) => t.id)).toEqual([tradeId]);
      expect(unconfirmed.body.data[0]).toMatchObject({ status: 'PENDING', transactions: [] });
      expect((await call(world.api, 'GET', `/v1/trades/all?txHash=${sentDeposit.hash}`)).body.data).toEqual([]);
      expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: sentDeposit.hash }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });

      // The Maker's side on anvil, as any EVM dApp runs it.
      const lock = await call(world.api, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
      const lockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
      expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
      const orderHash = order.orderHash as string;
      const makerUnlock = await eventually('the proof', () => call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, orderHash) }, makerToken), (r) => r.status !== 409, 120_000);
      expect(makerUnlock.status).toBe(200);
      const adUnlockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
      expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);

      // The Bridger's unlock, as a Freighter dApp that lost the create response makes it: the order hash
      // computed from /params, Freighter's signMessage over its 0x hex text, the transaction from its own account.
      const params = (await call(world.api, 'GET', `/v1/trades/${tradeId}/params`, undefined, bridgerToken)).body;
      expect(orderHashOf(params)).toBe(orderHash);
      expect(unlockMessage(orderHashOf(params))).toBe(orderHash.toLowerCase());
      const unlock = await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signUnlockMessage(bridgerKp, orderHashOf(params)) }, bridgerToken);
      expect(unlock.status).toBe(200);
      const makerBefore = await tokens.orderBalance(world.makerStellar.publicKey());
      const orderUnlock = await stellarTransaction('unlock', unlock.body, bridgerKp.publicKey(), network);
      orderUnlock.sign(bridgerKp);
      const sentUnlock = await sendStellarTransaction(orderUnlock, network);
      expect((await call(world.api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: sentUnlock.hash }, bridgerToken)).status).toBe(200);
      expect(await tokens.orderBalance(world.makerStellar.publicKey())).toBe(makerBefore + amount);
      expect((await call(world.api, 'GET', `/v1/trades/${tradeId}`)).body).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
      expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, orderHash)).toEqual({ state: ORDER_STATE.unlocked });
    }, 240_000); // a whole trade with a proof: about a minute on a loaded 2-core machine
  });

  describe('a Stellar recipient that cannot receive the ad token (issue 29)', () => {
    it('is refused at create with 422 naming bridgerDstAddress (RECIPIENT_CANNOT_RECEIVE), changing nothing: a fresh G-address is no account, and XLM can only be paid to one', async () => {
      const { bridgerKey, bridger } = world.evmParties;
      const { adId, routeId } = await createStellarAdForEvmOrders(world, 5_000_000n);
      const bridgerToken = (await loginEvm(world.api, bridger)).body.tokens.access;
      await approveWxlm(world, '31337', bridgerKey!.privateKey, 'orderPortal', 1_000_000n);
      const before = (await call(world.api, 'GET', `/v1/ads/${adId}`)).body;
      const trades = async () => (await call(world.api, 'GET', `/v1/trades/all?adId=${adId}`)).body.data;
      const create = (bridgerDstAddress: string) => call(world.api, 'POST', '/v1/trades/create', { adId, routeId, amount: '1000000', bridgerDstAddress }, bridgerToken);

      const fresh = Keypair.random().publicKey();
      const refused = await create(fresh);
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity', code: 'RECIPIENT_CANNOT_RECEIVE' });
      expect(refused.body.message).toEqual([expect.stringMatching(new RegExp(`^bridgerDstAddress cannot receive the ad token: ${fresh} is no account on this network`))]);
      expect((await call(world.api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: before.availableAmount, poolAmount: before.poolAmount });
      expect(await trades()).toEqual([]);

      // The same address once it exists is paid: the reservation is made.
      await fund(world.server, fresh);
      const taken = await create(fresh);
      expect(taken.status).toBe(200);
      expect(taken.body.reqContractDetails.orderParams).toMatchObject({ adRecipient: fresh });
    }, 120_000);
  });

  describe('reservations against a Stellar order chain, backed by what the Bridger holds there', () => {
    it('reads the Bridger\'s SEP-41 balance at create, and ends a reservation whose tokens moved on when a funded Bridger finds the ad taken', async () => {
      const tokens = tusdForTusd(world);
      const testToken = world.stellar.deployment.testToken;
      // 1 TUSD on anvil (6 decimals): 10,000,000 base units of the Stellar TUSD (7 decimals).
      const { adId, routeId } = await createEvmAdForStellarOrders(world, tokens, 1_000_000n);
      const reserve = async (wallet: Keypair) => call(world.api, 'POST', '/v1/trades/create', {
        adId, routeId, amount: '10000000', bridgerDstAddress: world.evmParties.bridger.address,
      }, (await loginStellar(world.api, wallet)).body.tokens.access);

      // A wallet holding none of the token is refused at create, naming the amount and what the chain says.
      const unfunded = Keypair.random();
      const empty = await reserve(unfunded);
      expect(empty.status).toBe(422);
      expect(empty.body.message).toEqual([`amount 10000000 is more than ${unfunded.publicKey()} holds of TUSD (${testToken}) on chain 148 (0)`]);

      // A wallet holding the deposit reserves the whole ad (no allowance: the portal pulls by the Bridger's authorisation), then passes the tokens on.
      const attacker = Keypair.random();
      await fund(world.server, attacker.publicKey());
      await mintTestToken(world.server, world.passphrase, testToken, attacker.publicKey(), 10_000_000n);
      const held = await reserve(attacker);
      expect(held.status).toBe(200);
      expect((await call(world.api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '0' });
      await submitOperation(world.server, world.passphrase, attacker, Operation.invokeContractFunction({
        contract: testToken, function: 'transfer',
        args: [new Address(attacker.publicKey()).toScVal(), new Address(world.bridgerStellar.publicKey()).toScVal(), nativeToScVal(10_000_000n, { type: 'i128' })],
      }));

      // The Bridger now holding them finds the ad taken: the attacker's balance is read again, its reservation ends, and the ad is the Bridger's.
      const honest = await reserve(world.bridgerStellar);
      expect(honest.status).toBe(200);
      expect((await call(world.api, 'GET', `/v1/trades/${held.body.tradeId}`)).body.status).toBe('EXPIRED');
      expect((await call(world.api, 'GET', `/v1/trades/${honest.body.tradeId}`)).body.status).toBe('PENDING');

      // The attacker, holding nothing now, is refused on its own balance before anyone else's is read (issue 33).
      expect((await reserve(attacker)).status).toBe(422);
      // A backed reservation is left alone: the honest Bridger still holds its deposit, so the next funded asker
      // (whose request re-reads the ad's reservations: UNBACKED_RESERVATIONS_RECHECK_SECONDS is 0 here) is turned away.
      const another = Keypair.random();
      await fund(world.server, another.publicKey());
      await mintTestToken(world.server, world.passphrase, testToken, another.publicKey(), 10_000_000n);
      const turnedAway = await reserve(another);
      expect(turnedAway.status).toBe(409);
      expect(turnedAway.body.message).toMatch(/cannot cover 10000000/);
      expect((await call(world.api, 'GET', `/v1/trades/${honest.body.tradeId}`)).body.status).toBe('PENDING');
    });
  });

  describe('the timeouts on Soroban, on the ledger clock moved forward', () => {
    const amount = 7_000_000n;
    let deposited: TradeRun;
    let locked: TradeRun;
    const adIdWord = (adId: string) => nativeToScVal(Buffer.from(uuidToBytes32(adId).slice(2), 'hex'), { type: 'bytes' });

    beforeAll(async () => {
      // A deposit on the Soroban OrderPortal the Maker never locks, and a lock on the Soroban AdManager the Bridger never unlocks.
      deposited = await evmAdStellarDeposit(world, amount);
      const run = await stellarAdEvmDeposit(world, amount);
      await stellarLock(world, run);
      locked = run;
    }, 120_000);

    it('the books audit reads the orders on the Soroban OrderPortal and AdManager and the Stellar ads: zero drift, nothing unchecked', async () => {
      const report = await service.container.runAudit();
      expect(report).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
      expect(report.trades).toBeGreaterThanOrEqual(2);
    });

    it('refuses both before their time: the host answers TooEarly (#18) and nothing moves', async () => {
      await expect(submitStellarTimeout(world, world.bridgerStellar, 'refund', deposited.orderParams)).rejects.toThrow(/Error\(Contract, #18\)/);
      await expect(submitStellarTimeout(world, world.makerStellar, 'releaseLock', locked.orderParams)).rejects.toThrow(/Error\(Contract, #18\)/);
      expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, deposited.orderHash)).toEqual({ state: ORDER_STATE.deposited });
      expect(await sorobanOrder(world, world.stellar.deployment.adManager, locked.orderHash)).toEqual({ state: ORDER_STATE.locked });
    });

    it('releases the Maker\'s lock from lockExpiry on: the amount is available in the ad again, on the chain and, through the audit, in the books; once', async () => {
      const before = await sorobanView(world, world.stellar.deployment.adManager, 'ad', [adIdWord(locked.adId)]);
      await advanceLedgerTo(world, BigInt(locked.orderParams.lockExpiry));
      const release = await submitStellarTimeout(world, world.makerStellar, 'releaseLock', locked.orderParams);
      expect(await sorobanOrder(world, world.stellar.deployment.adManager, locked.orderHash)).toEqual({ state: ORDER_STATE.released });
      const after = await sorobanView(world, world.stellar.deployment.adManager, 'ad', [adIdWord(locked.adId)]);
      expect(after).toMatchObject({ available: before.available + amount, locked: before.locked - amount });
      // A second release finds no lock (WrongOrderState, #10).
      await expect(submitStellarTimeout(world, world.makerStellar, 'releaseLock', locked.orderParams)).rejects.toThrow(/Error\(Contract, #10\)/);

      // Nobody reports it: the books audit finds the release event (two topics: name, orderHash) and ends the trade; zero drift.
      const report = await service.container.runAudit();
      expect(report).toMatchObject({ drifts: [], unchecked: 0 });
      expect(report.repairs).toEqual([{ kind: 'trade', subject: locked.tradeId, txHash: expect.any(String) }]);
      expect(report.repairs[0]!.txHash.replace(/^0x/, '').toLowerCase()).toBe(release.hash.replace(/^0x/, '').toLowerCase());
      expect((await call(world.api, 'GET', `/v1/trades/${locked.tradeId}`)).body).toMatchObject({ status: 'EXPIRED', bridgerClaimed: false });
      expect((await call(world.api, 'GET', `/v1/ads/${locked.adId}`)).body).toMatchObject({ availableAmount: after.available.toString() });
      expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
    });

    it('refunds the Bridger\'s deposit from refundTime on: the XLM leaves the portal for the Bridger; once', async () => {
      const portalBefore = await xlmBalance(world, world.stellar.deployment.orderPortal);
      const bridgerBefore = await xlmBalance(world, world.bridgerStellar.publicKey());
      await advanceLedgerTo(world, BigInt(deposited.orderParams.refundTime));
      const refund = await submitStellarTimeout(world, world.bridgerStellar, 'refund', deposited.orderParams);
      expect(await xlmBalance(world, world.stellar.deployment.orderPortal)).toBe(portalBefore - amount);
      // The Bridger submitted it: the deposit back, less the fee the network charged.
      expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerBefore + amount - feeCharged(refund));
      expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, deposited.orderHash)).toEqual({ state: ORDER_STATE.refunded });
      await expect(submitStellarTimeout(world, world.bridgerStellar, 'refund', deposited.orderParams)).rejects.toThrow(/Error\(Contract, #10\)/);
    });
  });
});
