import { Contract, ContractFactory, Wallet, type InterfaceAbi } from 'ethers';
import { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import { uuidToBytes32 } from '../../chains/address.ts';
import { compileSolidity } from '../../contracts/evm/compile.ts';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { AD_CHAIN, devnetClient, eventually, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, loginEvm } from '../support/wallets.ts';

/**
 * The front-run of issue 20, on the two-chain devnet: a Bridger copies the Maker's pending
 * ad-side unlock (its signed call data, as the mempool shows it) into one transaction of a batching
 * contract together with the unlock of a trade of its own, and confirms that transaction for its
 * own trade first. The victim's confirmation of the same transaction must still confirm the
 * victim's unlock: a transaction confirms every subject whose event it carries.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
// The attacker's second wallet: the Maker of the ad its own trade runs against.
const attackerMakerKey = anvilAccounts(4)[3]!;
const attackerMaker = new Web3().eth.accounts.privateKeyToAccount(attackerMakerKey.privateKey);

let service: TestService;
let devnet: DevnetClient;
let routeId: string;
const tokens: Record<string, string> = {};

const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;

/** An ad of `amount` by `key`, a trade of `tradeAmount` against it by the Bridger, deposited and locked. */
async function lockedTrade(key: string, account: { address: string }, amount: bigint, tradeAmount: bigint) {
  const token = tokens[account.address]!;
  const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: account.address, fundAmount: amount.toString() }, token);
  expect(created.status).toBe(200);
  await devnet.approve(AD_CHAIN, key, 'adManager', amount);
  const adTx = await devnet.send(AD_CHAIN, 'adManager', key, 'createAd', created.body);
  expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, token)).status).toBe(200);
  const adId: string = created.body.adId;

  await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', tradeAmount);
  const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: tradeAmount.toString(), bridgerDstAddress: bridger.address }, tokens[bridger.address]);
  expect(opened.status).toBe(200);
  const { tradeId, reqContractDetails: order } = opened.body;
  const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
  expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, tokens[bridger.address])).status).toBe(200);
  const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, token);
  expect(lock.status).toBe(200);
  const lockTx = await devnet.send(AD_CHAIN, 'adManager', key, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
  expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, token)).status).toBe(200);
  return { adId, tradeId, order, token, key };
}

/** The Maker's ad-side unlock call data, once the proof is ready. */
async function makerUnlock(t: Awaited<ReturnType<typeof lockedTrade>>) {
  const answer = await eventually('the proof', () =>
    call(service, 'POST', `/v1/trades/${t.tradeId}/unlock`, { signature: signOrderHash(t.key, t.order.orderHash) }, t.token), (r) => r.status !== 409);
  expect(answer.status).toBe(200);
  return answer.body;
}

/** The order-side unlock by the Bridger, confirmed: pays the Maker. */
async function settleOrderSide(t: Awaited<ReturnType<typeof lockedTrade>>) {
  const bridgerToken = tokens[bridger.address]!;
  const signed = await call(service, 'POST', `/v1/trades/${t.tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, t.order.orderHash) }, bridgerToken);
  expect(signed.status).toBe(200);
  const tx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', signed.body, signed.body);
  expect((await call(service, 'POST', `/v1/trades/${t.tradeId}/unlock/confirm`, { txHash: tx }, bridgerToken)).status).toBe(200);
}

beforeAll(async () => {
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0' });
  devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  for (const account of [maker, bridger, attackerMaker]) tokens[account.address] = (await loginEvm(service, account)).body.tokens.access;
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
  routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
});

afterAll(async () => {
  devnet?.close();
  await service?.close();
});

describe('a Bridger batching the Maker\'s pending unlock with its own', () => {
  it('confirms both trades\' unlocks from the one transaction, and nobody is paid twice', async () => {
    const victim = await lockedTrade(makerKey!.privateKey, maker, 1000n, 100n);
    const own = await lockedTrade(attackerMakerKey.privateKey, attackerMaker, 500n, 50n);
    const victimUnlock = await makerUnlock(victim);
    const ownUnlock = await makerUnlock(own);

    // The attacker's batch: the victim Maker's signed unlock (copied) and its own, in one transaction.
    const compiled = await compileSolidity(['contracts/evm/test-contracts/Batcher.sol']);
    const attacker = new Wallet(bridgerKey!.privateKey, devnet.provider(AD_CHAIN));
    const factory = new ContractFactory(compiled.Batcher!.abi as InterfaceAbi, compiled.Batcher!.bytecode, attacker);
    const batcher = (await (await factory.deploy()).waitForDeployment()) as unknown as Contract;
    const adManager = devnet.contract(AD_CHAIN, 'adManager', bridgerKey!.privateKey);
    const encode = (body: any) => {
      const evmCall = evmContractCall('unlock', body, body);
      return adManager.interface.encodeFunctionData(evmCall.functionName, evmCall.args);
    };
    const managerAddress = service.devnet!.deployments[AD_CHAIN]!.adManager;
    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
    const sent = await batcher.getFunction('batch')([managerAddress, managerAddress], [encode(victimUnlock), encode(ownUnlock)]);
    await sent.wait();
    const batchTx: string = sent.hash;
    expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 150n);

    // The attacker confirms the batch for its own trade first.
    expect((await call(service, 'POST', `/v1/trades/${own.tradeId}/unlock/confirm`, { txHash: batchTx }, tokens[bridger.address])).status).toBe(200);
    expect(await trade(own.tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });

    // The victim's own transaction can no longer succeed: its signed request was spent in the batch.
    await expect(devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', victimUnlock, victimUnlock)).rejects.toThrow();
    // The batch confirms the victim's unlock too: its own event in the transaction.
    const confirmed = await call(service, 'POST', `/v1/trades/${victim.tradeId}/unlock/confirm`, { txHash: batchTx }, victim.token);
    expect(confirmed).toMatchObject({ status: 200, body: { tradeId: victim.tradeId, success: true } });
    expect(await trade(victim.tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });
    // Repeats, by either party, change nothing.
    expect((await call(service, 'POST', `/v1/trades/${victim.tradeId}/unlock/confirm`, { txHash: batchTx }, tokens[bridger.address])).status).toBe(200);
    expect((await call(service, 'POST', `/v1/trades/${own.tradeId}/unlock/confirm`, { txHash: batchTx }, own.token)).status).toBe(200);
    const recorded = await service.knex('chain_events').where({ tx_hash: batchTx.toLowerCase() }).orWhere({ tx_hash: batchTx }).select('log_index', 'subject_id');
    expect(recorded.map((r) => r.subject_id).sort()).toEqual([own.tradeId, victim.tradeId].sort());

    // The order side is now due for both: each Maker is paid once; both trades settle.
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
    const attackerMakerBefore = await devnet.balanceOf(ORDER_CHAIN, attackerMaker.address);
    await settleOrderSide(victim);
    await settleOrderSide(own);
    expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
    expect(await devnet.balanceOf(ORDER_CHAIN, attackerMaker.address)).toBe(attackerMakerBefore + 50n);
    expect(await trade(victim.tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
    expect(await trade(own.tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });

    // The books agree with the AdManager: each ad paid its lock out once.
    const reader = devnet.contract(AD_CHAIN, 'adManager', bridgerKey!.privateKey);
    for (const [t, pool, paid] of [[victim, 1000n, 100n], [own, 500n, 50n]] as const) {
      const onChain = await reader.getFunction('ads')(uuidToBytes32(t.adId));
      const books = (await call(service, 'GET', `/v1/ads/${t.adId}`)).body;
      expect(books).toMatchObject({ poolAmount: pool.toString(), availableAmount: (pool - paid).toString(), lockedAmount: '0' });
      expect({ available: onChain.available, locked: onChain.locked }).toEqual({ available: pool - paid, locked: 0n });
    }
  }, 240_000);
});
