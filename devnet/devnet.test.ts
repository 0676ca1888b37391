import { Keypair } from '@stellar/stellar-sdk';
import { randomUUID } from 'node:crypto';
import { Contract, Interface, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChainUnavailableError,
  NotFinalError,
  RpcUnavailableError,
  TransactionFailedError,
  TransactionNotFoundError,
  WrongContractError,
  WrongEventError,
} from '../chains/errors.ts';
import { readPortalDeposits, readPortalRoot } from '../chains/evm/portal.ts';
import { createEvmClient } from '../chains/evm/rpc.ts';
import { isEvmBlockCanonical, verifyEvmTransaction } from '../chains/evm/verify.ts';
import { createTransactionVerifier } from '../chains/verify.ts';
import { NATIVE_TOKEN_ADDRESS } from '../domain/index.ts';
import { evmContractCall } from '../chains/evm/call-args.ts';
import { computeOrderHash, encodeOrderParams, ORDER_FIELDS, randomSalt, type OrderParams } from '../chains/order.ts';
import { buildSignedCallData } from '../chains/signed-call-data.ts';
import { createRelayerSigners } from '../chains/signers.ts';
import { computeOrderTimes } from '../chains/timing.ts';
import { ACTION_NAMES, ACTIONS, structFields, typeString, type ActionFields, type ActionName } from '../chains/request-schema.ts';
import { leafOf, randomSecret, secretCommitment, TREE_DEPTH, zeroHashes } from '../prover/commitments.ts';
import { poseidon2 } from '../prover/poseidon.ts';
import { loadDevnetArtifacts } from '../contracts/evm/artifacts.ts';
import { anvilAccounts, startDevnet, type Devnet } from './index.ts';

const verifier = createTransactionVerifier();

const domain = { name: 'ProofBridge', version: '1' };
const relayerKey = Wallet.createRandom().privateKey;
const signers = createRelayerSigners({ relayerEvmPrivateKey: relayerKey, relayerStellarSecret: Keypair.random().secret() }, domain);
const [, makerAccount, bridgerAccount] = anvilAccounts(3);
const A = '31337';
const B = '31338';

let devnet: Devnet;
let abi: { adManager: InterfaceAbi; orderPortal: InterfaceAbi; token: InterfaceAbi };
const providers: JsonRpcProvider[] = [];

function provider(chainId: string): JsonRpcProvider {
  const p = new JsonRpcProvider(devnet.rpcUrls[chainId], undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
  providers.push(p);
  return p;
}

function contracts(chainId: string, account: { privateKey: string }) {
  const wallet = new Wallet(account.privateKey, provider(chainId));
  const deployment = devnet.deployments[chainId]!;
  return {
    wallet,
    adManager: new Contract(deployment.adManager, abi.adManager, wallet),
    orderPortal: new Contract(deployment.orderPortal, abi.orderPortal, wallet),
    token: new Contract(deployment.testErc20, abi.token, wallet),
  };
}

async function sign<A extends ActionName>(chainId: string, contract: 'adManager' | 'orderPortal', action: A, fields: ActionFields<A>, now?: number) {
  return buildSignedCallData({
    target: { kind: 'EVM', chainId, contractAddress: devnet.deployments[chainId]![contract] },
    action,
    fields,
    signers,
    ttlSeconds: 600,
    now,
  });
}

/** The custom error a call reverted with (ethers leaves it undecoded when gas estimation reverts). */
async function revertName(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
  } catch (error) {
    const data = (error as { data?: string }).data;
    if (!data) throw error;
    const errors = new Interface([...abi.adManager as never[], ...abi.orderPortal as never[]].filter((e: { type?: string }) => e.type === 'error'));
    return errors.parseError(data)?.name;
  }
  return undefined;
}

async function mined(tx: Promise<{ wait(): Promise<unknown>; hash: string }>): Promise<string> {
  const sent = await tx;
  await sent.wait();
  return sent.hash;
}

/** Creates a TUSD ad of `amount` for the maker on `chainId`; returns the ad id and the tx hash. */
async function createAd(chainId: string, amount: bigint, orderChainId = B) {
  const maker = contracts(chainId, makerAccount!);
  const adId = randomUUID();
  const data = await sign(chainId, 'adManager', 'createAd', {
    adId,
    adCreator: makerAccount!.address,
    adToken: devnet.deployments[chainId]!.testErc20,
    initialAmount: amount,
    orderChainId,
    adRecipient: makerAccount!.address,
  });
  await mined(maker.token.getFunction('approve')(devnet.deployments[chainId]!.adManager, amount));
  const call = evmContractCall('createAd', data);
  const txHash = await mined(maker.adManager.getFunction(call.functionName)(...call.args, { value: call.value }));
  return { adId, data, txHash };
}

const adIdWord = (adId: string) => `0x${'0'.repeat(32)}${adId.replaceAll('-', '')}`;

beforeAll(async () => {
  devnet = await startDevnet({ ports: [0, 0], relayerEvmAddress: signers.evmAddress, domain });
  const artifacts = await loadDevnetArtifacts();
  abi = {
    adManager: artifacts.adManager.abi as InterfaceAbi,
    orderPortal: artifacts.orderPortal.abi as InterfaceAbi,
    token: artifacts.testErc20.abi as InterfaceAbi,
  };
});

afterAll(async () => {
  for (const p of providers) p.destroy();
  await devnet?.stop();
});

describe('devnet deployment', () => {
  it('deploys to the addresses committed in devnet/registry.json, on both chains', async () => {
    const { readFileSync } = await import('node:fs');
    const committed = JSON.parse(readFileSync('devnet/registry.json', 'utf8'));
    for (const chainId of [A, B]) {
      const entry = committed.chains.find((chain: { chainId: string }) => chain.chainId === chainId);
      expect(entry).toMatchObject({
        kind: 'EVM',
        adManagerAddress: devnet.deployments[chainId]!.adManager,
        orderPortalAddress: devnet.deployments[chainId]!.orderPortal,
      });
      const token = committed.tokens.find((t: { chainId: string; kind: string }) => t.chainId === chainId && t.kind === 'ERC20');
      expect(token.address).toBe(devnet.deployments[chainId]!.testErc20);
    }
    const devnetRoutes = devnet.registry.routes;
    expect(devnetRoutes).toHaveLength(4);
    for (const route of devnetRoutes) expect(committed.routes).toContainEqual(route);
  });
});

describe('contract sources', () => {
  it('declare exactly the request and order type strings the service signs', async () => {
    const { readFileSync } = await import('node:fs');
    const sources = ['RelayerRequests', 'AdManager', 'OrderPortal']
      .map((name) => readFileSync(`contracts/evm/src/${name}.sol`, 'utf8'))
      .join('\n');
    for (const action of ACTION_NAMES) {
      expect(sources).toContain(`"${typeString(ACTIONS[action].primaryType, structFields(action))}"`);
    }
    expect(sources).toContain(`"${typeString('Order', ORDER_FIELDS)}"`);
  });
});

describe('relayer-signed requests on the contracts', () => {
  it('accepts call data the service built: the contract recovers the relayer as signer', async () => {
    const { adId, txHash, data } = await createAd(A, 1_000n);
    const ad = await contracts(A, makerAccount!).adManager.getFunction('ads')(adIdWord(adId));
    expect(ad.available).toBe(1_000n);
    expect(ad.creator).toBe(makerAccount!.address);
    await expect(
      verifyEvmTransaction(createEvmClient(devnet.rpcUrls[A]!), {
        txHash,
        contractAddress: devnet.deployments[A]!.adManager,
        event: 'AdCreated',
        args: { reqHash: data.reqHash, adId: adIdWord(adId) },
        confirmations: 1,
      }),
    ).resolves.toMatchObject({ event: 'AdCreated', args: { amount: '1000', creator: makerAccount!.address } });
  });

  it('pays out withdrawals and the close to the signed address, and verifies them per action', async () => {
    const { adId } = await createAd(A, 1_000n);
    const maker = contracts(A, makerAccount!);
    const chain = { kind: 'EVM' as const, chainId: A, rpcUrl: devnet.rpcUrls[A]!, confirmations: 1 };
    const to = anvilAccounts(4)[3]!.address;
    const before = (await maker.token.getFunction('balanceOf')(to)) as bigint;

    const withdraw = await sign(A, 'adManager', 'withdrawFromAd', { adId, amount: 300n, to });
    const withdrawCall = evmContractCall('withdrawFromAd', withdraw);
    const withdrawTx = await mined(maker.adManager.getFunction(withdrawCall.functionName)(...withdrawCall.args));
    const close = await sign(A, 'adManager', 'closeAd', { adId, to });
    const closeCall = evmContractCall('closeAd', close);
    const closeTx = await mined(maker.adManager.getFunction(closeCall.functionName)(...closeCall.args));

    expect(((await maker.token.getFunction('balanceOf')(to)) as bigint) - before).toBe(1_000n);
    const contractAddress = devnet.deployments[A]!.adManager;
    await expect(
      verifier.verify(chain, { txHash: withdrawTx, contractAddress, action: 'withdrawFromAd', args: { reqHash: withdraw.reqHash } }),
    ).resolves.toMatchObject({ event: 'AdWithdrawn', from: makerAccount!.address, args: { amount: '300', to } });
    await expect(
      verifier.verify(chain, { txHash: closeTx, contractAddress, action: 'closeAd', args: { reqHash: close.reqHash } }),
    ).resolves.toMatchObject({ event: 'AdClosed', args: { amount: '700' } });
    // The close's receipt is not the withdrawal the service issued.
    await expect(
      verifier.verify(chain, { txHash: closeTx, contractAddress, action: 'withdrawFromAd', args: { reqHash: withdraw.reqHash } }),
    ).rejects.toThrow(WrongEventError);
  });

  it('rejects a request signed by a key other than the relayer', async () => {
    const { adId } = await createAd(A, 10n);
    const impostor = createRelayerSigners({ relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: signers.stellar.secret() }, domain);
    const data = await buildSignedCallData({
      target: { kind: 'EVM', chainId: A, contractAddress: devnet.deployments[A]!.adManager },
      action: 'closeAd',
      fields: { adId, to: makerAccount!.address },
      signers: impostor,
      ttlSeconds: 600,
    });
    const { adManager } = contracts(A, makerAccount!);
    const call = adManager.getFunction('closeAd')(adIdWord(adId), makerAccount!.address, data.authToken, data.deadline, data.signature);
    expect(await revertName(call)).toBe('InvalidSignature');
  });

  it('reverts a replayed authToken', async () => {
    const { adId } = await createAd(A, 100n);
    const maker = contracts(A, makerAccount!);
    const data = await sign(A, 'adManager', 'fundAd', { adId, amount: 5n });
    await mined(maker.token.getFunction('approve')(devnet.deployments[A]!.adManager, 10n));
    const fund = () => maker.adManager.getFunction('fundAd')(adIdWord(adId), 5n, data.authToken, data.deadline, data.signature);
    await mined(fund());
    expect(await revertName(fund())).toBe('AuthTokenUsed');
  });

  it('reverts an expired request', async () => {
    const { adId } = await createAd(A, 100n);
    const data = await sign(A, 'adManager', 'withdrawFromAd', { adId, amount: 1n, to: makerAccount!.address }, Date.now() - 3_600_000);
    const { adManager } = contracts(A, makerAccount!);
    expect(await revertName(adManager.getFunction('withdrawFromAd')(adIdWord(adId), 1n, makerAccount!.address, data.authToken, data.deadline, data.signature))).toBe('RequestExpired');
  });

  it('signs its own deadline when the caller supplies a far-future one: the contract then rejects the expired request', async () => {
    const { adId } = await createAd(A, 100n);
    const issuedAt = Date.now() - 3_600_000; // the service's deadline has passed by now
    const farFuture = String(Math.floor(Date.now() / 1000) + 10 * 365 * 86_400);
    const data = await sign(A, 'adManager', 'withdrawFromAd', { adId, amount: 1n, to: makerAccount!.address, deadline: farFuture } as never, issuedAt);
    expect(data.deadline).toBe(String(Math.floor(issuedAt / 1000) + 600));
    const call = evmContractCall('withdrawFromAd', { ...data, deadline: farFuture });
    const { adManager } = contracts(A, makerAccount!);
    // With the caller's deadline the signature does not match; with the service's, the request has expired.
    expect(await revertName(adManager.getFunction(call.functionName)(...call.args))).toBe('InvalidSignature');
    const honest = evmContractCall('withdrawFromAd', data);
    expect(await revertName(adManager.getFunction(honest.functionName)(...honest.args))).toBe('RequestExpired');
  });

  it('rejects on chain B a request signed for chain A, though the contract address is the same', async () => {
    expect(devnet.deployments[A]!.adManager).toBe(devnet.deployments[B]!.adManager);
    const { adId } = await createAd(B, 100n, A);
    const signedForA = await sign(A, 'adManager', 'withdrawFromAd', { adId, amount: 1n, to: makerAccount!.address });
    const { adManager } = contracts(B, makerAccount!);
    expect(await revertName(adManager.getFunction('withdrawFromAd')(
        adIdWord(adId), 1n, makerAccount!.address, signedForA.authToken, signedForA.deadline, signedForA.signature,
      ))).toBe('InvalidSignature');
  });
});

/** Order params for a TUSD trade: ad on chain B (the maker's ad), order on chain A. */
function orderOn(adId: string, amount: bigint): OrderParams {
  return {
    orderChainToken: devnet.deployments[A]!.testErc20,
    adChainToken: devnet.deployments[B]!.testErc20,
    amount: amount.toString(),
    orderAmount: amount.toString(),
    adAmount: amount.toString(),
    bridger: bridgerAccount!.address,
    orderRecipient: makerAccount!.address,
    adId,
    adCreator: makerAccount!.address,
    adRecipient: bridgerAccount!.address,
    salt: randomSalt(),
    orderChainId: A,
    orderPortal: devnet.deployments[A]!.orderPortal,
    adChainId: B,
    adManager: devnet.deployments[B]!.adManager,
    ...computeOrderTimes(Math.floor(Date.now() / 1000)),
  };
}

/** The bridger deposits `params` on chain A through createOrder; returns what the service would keep. */
async function deposit(params: OrderParams) {
  const bridger = contracts(A, bridgerAccount!);
  const orderHash = computeOrderHash(params, domain);
  const secret = randomSecret();
  const commitment = secretCommitment(secret);
  const data = await sign(A, 'orderPortal', 'createOrder', { orderHash, secretCommitment: commitment });
  if (params.orderChainToken !== NATIVE_TOKEN_ADDRESS) {
    await mined(bridger.token.getFunction('approve')(devnet.deployments[A]!.orderPortal, BigInt(params.amount)));
  }
  const call = evmContractCall('createOrder', data, { orderParams: params });
  const txHash = await mined(bridger.orderPortal.getFunction(call.functionName)(...call.args, { value: call.value }));
  return { orderHash, secret, commitment, data, txHash };
}

/** Root of a depth-20 tree over `leaves` with zero padding, computed level by level (independent of the contract's incremental method). */
function rootOf(leaves: bigint[]): bigint {
  const zeros = zeroHashes();
  let level = leaves;
  for (let height = 0; height < TREE_DEPTH; height++) {
    const next: bigint[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(poseidon2(level[i]!, level[i + 1] ?? zeros[height]!));
    level = next;
  }
  return level[0] ?? zeros[TREE_DEPTH]!;
}

describe('OrderPortal deposits and the Poseidon tree', () => {
  it('keeps the same root as an off-chain Poseidon tree after a series of deposits, and reports them in leaf order', async () => {
    const web3 = createEvmClient(devnet.rpcUrls[A]!);
    const portal = devnet.deployments[A]!.orderPortal;
    const before = await readPortalRoot(web3, portal);
    const fromBlock = BigInt(await provider(A).getBlockNumber());
    const deposits = [];
    for (let i = 0; i < 5; i++) deposits.push(await deposit(orderOn(randomUUID(), BigInt(10 + i))));
    const toBlock = BigInt(await provider(A).getBlockNumber());

    const events = await readPortalDeposits(web3, portal, 0n, toBlock);
    expect(events.map((e) => e.leafIndex)).toEqual(events.map((_, i) => i));
    const ours = events.slice(before.leafCount);
    expect(ours.map((e) => e.orderHash)).toEqual(deposits.map((d) => d.orderHash));
    expect(ours.map((e) => e.leaf)).toEqual(deposits.map((d) => leafOf(d.orderHash, d.commitment)));
    expect(ours.every((e) => e.blockNumber > fromBlock)).toBe(true);

    const after = await readPortalRoot(web3, portal);
    expect(after.leafCount).toBe(before.leafCount + 5);
    expect(after.root).toBe(rootOf(events.map((e) => e.leaf)));
    expect(ours.at(-1)!.root).toBe(after.root);
    const receipt = await provider(A).getTransactionReceipt(deposits.at(-1)!.txHash);
    console.log(`createOrder gas (ERC-20, 20 Poseidon levels): ${receipt!.gasUsed}`);
  });

  it('takes a native ETH deposit as the transaction value', async () => {
    const params = { ...orderOn(randomUUID(), 10n ** 15n), orderChainToken: NATIVE_TOKEN_ADDRESS, adChainToken: NATIVE_TOKEN_ADDRESS };
    const portal = devnet.deployments[A]!.orderPortal;
    const before = await provider(A).getBalance(portal);
    await deposit(params);
    expect((await provider(A).getBalance(portal)) - before).toBe(10n ** 15n);
  });

  it('rejects a deposit whose order names another portal', async () => {
    const params = { ...orderOn(randomUUID(), 1n), orderPortal: devnet.deployments[A]!.adManager };
    const orderHash = computeOrderHash(params, domain);
    const data = await sign(A, 'orderPortal', 'createOrder', { orderHash, secretCommitment: 1n });
    const bridger = contracts(A, bridgerAccount!);
    expect(await revertName(bridger.orderPortal.getFunction('createOrder')(encodeOrderParams(params), 1n, data.authToken, data.deadline, data.signature))).toBe('NotForThisContract');
  });

  it('lets the maker lock the deposited order against the ad on the other chain', async () => {
    const { adId } = await createAd(B, 1_000n, A);
    const params = orderOn(adId, 400n);
    const { orderHash } = await deposit(params);
    const data = await sign(B, 'adManager', 'lockForOrder', { orderHash });
    const maker = contracts(B, makerAccount!);
    const txHash = await mined(maker.adManager.getFunction('lockForOrder')(encodeOrderParams(params), data.authToken, data.deadline, data.signature));
    const ad = await maker.adManager.getFunction('ads')(adIdWord(adId));
    expect([ad.available, ad.locked]).toEqual([600n, 400n]);
    await expect(
      verifyEvmTransaction(createEvmClient(devnet.rpcUrls[B]!), {
        txHash,
        contractAddress: devnet.deployments[B]!.adManager,
        event: 'OrderLocked',
        args: { orderHash, reqHash: data.reqHash },
        confirmations: 1,
      }),
    ).resolves.toMatchObject({ args: { amount: '400' } });
  });
});

describe('verifyEvmTransaction', () => {
  const check = (txHash: string, overrides: Partial<Parameters<typeof verifyEvmTransaction>[1]> = {}) =>
    verifyEvmTransaction(createEvmClient(devnet.rpcUrls[A]!), {
      txHash,
      contractAddress: devnet.deployments[A]!.orderPortal,
      event: 'OrderCreated',
      args: { orderHash: `0x${'01'.repeat(32)}` },
      confirmations: 1,
      ...overrides,
    });

  it('accepts a real deposit receipt with the orderHash and reqHash the service issued', async () => {
    const { txHash, orderHash, data, commitment } = await deposit(orderOn(randomUUID(), 7n));
    const verified = await check(txHash, { args: { orderHash, reqHash: data.reqHash } });
    expect(verified.from).toBe(bridgerAccount!.address);
    expect(verified.args.secretCommitment).toBe(commitment.toString());
  });

  it('rejects the receipt of another call to the same contract as the wrong event', async () => {
    const first = await deposit(orderOn(randomUUID(), 7n));
    const second = await deposit(orderOn(randomUUID(), 7n));
    await expect(check(second.txHash, { args: { orderHash: first.orderHash, reqHash: first.data.reqHash } })).rejects.toThrow(
      WrongEventError,
    );
  });

  it('rejects a transaction sent to another contract', async () => {
    const bridger = contracts(A, bridgerAccount!);
    const txHash = await mined(bridger.token.getFunction('approve')(devnet.deployments[A]!.orderPortal, 1n));
    await expect(check(txHash)).rejects.toThrow(WrongContractError);
  });

  it('rejects a reverted transaction as failed', async () => {
    const bridger = contracts(A, bridgerAccount!);
    const params = orderOn(randomUUID(), 1n);
    const data = await sign(A, 'orderPortal', 'createOrder', { orderHash: computeOrderHash(params, domain), secretCommitment: 1n });
    // No allowance, explicit gas: the transaction is mined and reverts in the token transfer.
    await mined(bridger.token.getFunction('approve')(devnet.deployments[A]!.orderPortal, 0n));
    const txHash = await bridger.orderPortal.getFunction('createOrder')(
      encodeOrderParams(params), 1n, data.authToken, data.deadline, data.signature, { gasLimit: 2_000_000n },
    ).then((tx: { hash: string }) => tx.hash);
    await provider(A).waitForTransaction(txHash);
    await expect(check(txHash)).rejects.toThrow(TransactionFailedError);
  });

  it('reports an unknown hash as not found', async () => {
    await expect(check(`0x${'ab'.repeat(32)}`)).rejects.toThrow(TransactionNotFoundError);
  });

  it('reports too few confirmations as not final (retryable), then accepts once blocks are mined', async () => {
    const { txHash, orderHash } = await deposit(orderOn(randomUUID(), 3n));
    const error = await check(txHash, { args: { orderHash }, confirmations: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFinalError);
    expect(error).toMatchObject({ retryable: true, confirmations: 1, required: 3 });
    await provider(A).send('evm_mine', []);
    await provider(A).send('evm_mine', []);
    await expect(check(txHash, { args: { orderHash }, confirmations: 3 })).resolves.toMatchObject({ confirmations: 3 });
  });

  it('refuses to verify without reqHash or orderHash to bind the event, and refuses a depth of 0', async () => {
    const { txHash, commitment, orderHash } = await deposit(orderOn(randomUUID(), 2n));
    await expect(check(txHash, { args: {} })).rejects.toThrow(/reqHash or orderHash/);
    await expect(check(txHash, { args: { secretCommitment: commitment } })).rejects.toThrow(/reqHash or orderHash/);
    await expect(check(txHash, { args: { orderHash }, confirmations: 0 })).rejects.toThrow(RangeError);
  });

  it('names the event by (chainId, txHash, logIndex) and its block by hash', async () => {
    const { txHash, orderHash } = await deposit(orderOn(randomUUID(), 2n));
    const receipt = (await provider(A).getTransactionReceipt(txHash))!;
    const created = receipt.logs.find((log) => log.address === devnet.deployments[A]!.orderPortal)!;
    await expect(check(txHash, { args: { orderHash } })).resolves.toMatchObject({
      chainId: A, txHash, logIndex: created.index, blockHash: receipt.blockHash, blockNumber: BigInt(receipt.blockNumber),
    });
    const chain = { kind: 'EVM' as const, chainId: A, rpcUrl: devnet.rpcUrls[A]!, confirmations: 1 };
    const args = { orderHash };
    await expect(verifier.verify(chain, { txHash, contractAddress: devnet.deployments[A]!.orderPortal, action: 'createOrder', args }))
      .resolves.toMatchObject({ chainId: A, txHash, logIndex: created.index, blockHash: receipt.blockHash, block: String(receipt.blockNumber) });
    // A registry entry whose RPC serves another chain proves nothing: that provider is unusable, so the
    // chain is unavailable (503, retry later), its cause the provider's refusal.
    const refused = await verifier.verify({ ...chain, chainId: B }, { txHash, contractAddress: devnet.deployments[A]!.orderPortal, action: 'createOrder', args })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChainUnavailableError);
    expect((refused as Error).cause).toBeInstanceOf(RpcUnavailableError);
  });

  it('with finality "finalized", waits for the node\'s finalized block, not just the depth', async () => {
    const { txHash, orderHash } = await deposit(orderOn(randomUUID(), 2n));
    await expect(check(txHash, { args: { orderHash }, finality: 'finalized' })).rejects.toThrow(NotFinalError);
    await expect(check(txHash, { args: { orderHash }, finality: 'depth' })).resolves.toMatchObject({ confirmations: 1 });
    // anvil finalizes 64 blocks behind its head.
    await provider(A).send('anvil_mine', ['0x41']);
    await expect(check(txHash, { args: { orderHash }, finality: 'finalized' })).resolves.toMatchObject({ txHash });
  });

  it('reports a confirmed deposit as no longer canonical once a reorg replaced its block, and then cannot verify it', async () => {
    const web3 = createEvmClient(devnet.rpcUrls[A]!);
    const chain = { kind: 'EVM' as const, chainId: A, rpcUrl: devnet.rpcUrls[A]!, confirmations: 2 };
    const snapshot = await provider(A).send('evm_snapshot', []);
    const { txHash, orderHash, data } = await deposit(orderOn(randomUUID(), 2n));
    await provider(A).send('evm_mine', []);
    const expected = { txHash, contractAddress: devnet.deployments[A]!.orderPortal, action: 'createOrder' as const, args: { orderHash, reqHash: data.reqHash } };
    const verified = await verifier.verify(chain, expected);
    await expect(verifier.isCanonical(chain, verified)).resolves.toBe(true);
    await expect(isEvmBlockCanonical(web3, BigInt(verified.block), verified.blockHash)).resolves.toBe(true);

    // The reorg: back to before the deposit, and other blocks at the same heights and beyond.
    await provider(A).send('evm_revert', [snapshot]);
    await provider(A).send('anvil_mine', ['0x3']);
    await expect(verifier.isCanonical(chain, verified)).resolves.toBe(false);
    await expect(verifier.verify(chain, expected)).rejects.toThrow(TransactionNotFoundError);
  });

  it('reports an unreachable RPC as unavailable (retryable)', async () => {
    const error = await verifyEvmTransaction(createEvmClient('http://127.0.0.1:1'), {
      txHash: `0x${'ab'.repeat(32)}`,
      contractAddress: devnet.deployments[A]!.orderPortal,
      event: 'OrderCreated',
      args: { orderHash: `0x${'01'.repeat(32)}` },
      confirmations: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcUnavailableError);
    expect(error).toMatchObject({ retryable: true });
  });
});
