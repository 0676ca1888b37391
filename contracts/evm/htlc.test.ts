import { Keypair } from '@stellar/stellar-sdk';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Contract, ContractFactory, Interface, JsonRpcProvider, Wallet, ZeroAddress, type InterfaceAbi } from 'ethers';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmContractCall, evmTimeoutCall, type CallExtras } from '../../chains/evm/call-args.ts';
import { readPortalDeposits } from '../../chains/evm/portal.ts';
import { createEvmClient } from '../../chains/evm/rpc.ts';
import { computeOrderHash, randomSalt, type OrderParams } from '../../chains/order.ts';
import type { ActionFields, ActionName } from '../../chains/request-schema.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners } from '../../chains/signers.ts';
import { computeOrderTimes, HTLC_LIMITS, orderWindows, type OrderTimes } from '../../chains/timing.ts';
import { artifacts as circuit } from '../../circuits/artifacts.ts';
import { nullifierHashOf, randomSecret, secretCommitment, TREE_DEPTH, zeroHashes } from '../../prover/commitments.ts';
import { poseidon2 } from '../../prover/poseidon.ts';
import { buildProofInput } from '../../prover/proof-input.ts';
import { encodeProof } from '../../prover/solidity.ts';
import { loadDevnetArtifacts, type DevnetArtifacts } from './artifacts.ts';
import { compileSolidity } from './compile.ts';
import { anvilAccounts, startDevnet, type Devnet } from '../../devnet/index.ts';

/**
 * The hash time-lock timeouts of the reference contracts (devnet/README.md "Timeouts"), on
 * anvil with time travel: each transaction that matters is mined at a chosen second
 * (evm_setNextBlockTimestamp), so the boundaries are hit exactly. Order chain A, ad chain B.
 */
const domain = { name: 'ProofBridge', version: '1' };
const signers = createRelayerSigners(
  { relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: Keypair.random().secret() },
  domain,
);
const [deployer, maker, bridger, stranger] = anvilAccounts(4);
const A = '31337';
const B = '31338';

let devnet: Devnet;
let compiled: DevnetArtifacts;
let errors: Interface;
const providers: Record<string, JsonRpcProvider> = {};

type Account = { privateKey: string; address: string };
type Name = 'adManager' | 'orderPortal' | 'testErc20';

function contract(chainId: string, name: Name, account: Account, address = devnet.deployments[chainId]![name]): Contract {
  const abi = (name === 'testErc20' ? compiled.testErc20 : compiled[name]).abi as InterfaceAbi;
  return new Contract(address, abi, new Wallet(account.privateKey, providers[chainId]));
}

const chainTime = async (chainId: string) => (await providers[chainId]!.getBlock('latest'))!.timestamp;
const rpc = (chainId: string, method: string, params: unknown[] = []) => providers[chainId]!.send(method, params);

/**
 * The receipt of a sent transaction, polled: ethers' waitForTransaction waits for the next block
 * when its first receipt read races anvil's automine, and with no further transactions none comes.
 */
async function minedReceipt(chainId: string, hash: string) {
  for (let i = 0; i < 600; i++) {
    const receipt = await providers[chainId]!.getTransactionReceipt(hash);
    if (receipt) return receipt;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`transaction ${hash} was not mined within 15 s`);
}

/** The name of the custom error in revert data, or the thrown error itself when there is none. */
function revertName(error: unknown): string {
  const data = (error as { data?: string; info?: { error?: { data?: string } } }).data ?? (error as { info?: { error?: { data?: string } } }).info?.error?.data;
  if (!data) throw error;
  return errors.parseError(data)?.name ?? `unknown revert ${data}`;
}

/**
 * Sends `functionName(args)` from `account`, mined in a block stamped `at` (unix seconds) when given.
 * Resolves 'ok' or the custom error it reverted with (read back with eth_call at the mined block,
 * so the check runs at exactly that timestamp and state).
 */
async function attempt(
  chainId: string,
  name: Name,
  account: Account,
  call: { functionName: string; args: unknown[]; value?: bigint },
  at?: number,
  address?: string,
): Promise<string> {
  const target = contract(chainId, name, account, address);
  if (at !== undefined) await rpc(chainId, 'evm_setNextBlockTimestamp', [at]);
  const tx = await target.getFunction(call.functionName)(...call.args, { value: call.value ?? 0n, gasLimit: 5_000_000n });
  const receipt = await minedReceipt(chainId, tx.hash);
  if (receipt!.status === 1) return 'ok';
  try {
    await providers[chainId]!.call({ to: tx.to, from: account.address, data: tx.data, value: tx.value, blockTag: receipt!.blockNumber });
  } catch (error) {
    return revertName(error);
  }
  return 'reverted without an error';
}

/** A relayer-signed call as the service would issue it at `atSeconds` (the service's clock). */
async function signed<T extends ActionName>(
  chainId: string,
  target: 'adManager' | 'orderPortal',
  action: T,
  fields: ActionFields<T>,
  atSeconds: number,
  extras: CallExtras = {},
) {
  const data = await buildSignedCallData({
    target: { kind: 'EVM', chainId, contractAddress: devnet.deployments[chainId]![target] },
    action,
    fields,
    signers,
    ttlSeconds: 600,
    now: atSeconds * 1000,
  });
  return { data, call: evmContractCall(action, data, extras) };
}

const balance = (chainId: string, who: string) => contract(chainId, 'testErc20', maker!).getFunction('balanceOf')(who) as Promise<bigint>;
async function adOf(chainId: string, adId: string): Promise<{ available: bigint; locked: bigint }> {
  const ad = await contract(chainId, 'adManager', maker!).getFunction('ads')(`0x${'0'.repeat(32)}${adId.replaceAll('-', '')}`);
  return { available: ad.available, locked: ad.locked };
}

/** A TUSD ad of the maker on chain B paying out on chain A to the maker. */
async function createAd(amount: bigint): Promise<string> {
  const adId = randomUUID();
  await (await contract(B, 'testErc20', maker!).getFunction('approve')(devnet.deployments[B]!.adManager, amount)).wait();
  const { call } = await signed(B, 'adManager', 'createAd', {
    adId, adCreator: maker!.address, adToken: devnet.deployments[B]!.testErc20, initialAmount: amount, orderChainId: A, adRecipient: maker!.address,
  }, await chainTime(B));
  expect(await attempt(B, 'adManager', maker!, call)).toBe('ok');
  return adId;
}

function orderFor(adId: string, amount: bigint, times: OrderTimes, overrides: Partial<OrderParams> = {}): OrderParams {
  return {
    orderChainToken: devnet.deployments[A]!.testErc20, adChainToken: devnet.deployments[B]!.testErc20, amount: amount.toString(),
    orderAmount: amount.toString(), adAmount: amount.toString(),
    bridger: bridger!.address, orderRecipient: maker!.address, adId, adCreator: maker!.address, adRecipient: bridger!.address,
    salt: randomSalt(), orderChainId: A, orderPortal: devnet.deployments[A]!.orderPortal, adChainId: B, adManager: devnet.deployments[B]!.adManager,
    ...times, ...overrides,
  };
}

/** Times for an order created now (the later of the two chains' clocks), with the service's default policy. */
const timesNow = async () => computeOrderTimes(Math.max(await chainTime(A), await chainTime(B)));

async function deposit(order: OrderParams, secret = randomSecret()): Promise<string> {
  await (await contract(A, 'testErc20', bridger!).getFunction('approve')(devnet.deployments[A]!.orderPortal, BigInt(order.amount))).wait();
  const orderHash = computeOrderHash(order, domain);
  const { call } = await signed(A, 'orderPortal', 'createOrder', { orderHash, secretCommitment: secretCommitment(secret) }, await chainTime(A), { orderParams: order });
  return attempt(A, 'orderPortal', bridger!, call);
}

async function lock(order: OrderParams, at?: number): Promise<string> {
  const orderHash = computeOrderHash(order, domain);
  const { call } = await signed(B, 'adManager', 'lockForOrder', { orderHash }, at ?? (await chainTime(B)), { orderParams: order });
  return attempt(B, 'adManager', maker!, call, at);
}

/** A real Groth16 proof for `order` deposited with `secret`, against the portal's current root. */
async function proveDeposit(order: OrderParams, secret: bigint) {
  const orderHash = computeOrderHash(order, domain);
  const web3 = createEvmClient(devnet.rpcUrls[A]!);
  const deposits = await readPortalDeposits(web3, devnet.deployments[A]!.orderPortal, 0n, BigInt(await web3.eth.getBlockNumber()));
  const index = deposits.find((d) => d.orderHash === orderHash)!.leafIndex;
  const zeros = zeroHashes();
  let level = deposits.map((d) => d.leaf);
  let position = index;
  const pathElements: bigint[] = [];
  const pathIndices: number[] = [];
  for (let height = 0; height < TREE_DEPTH; height++) {
    pathElements.push(level[position ^ 1] ?? zeros[height]!);
    pathIndices.push(position & 1);
    const next: bigint[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(poseidon2(level[i]!, level[i + 1] ?? zeros[height]!));
    level = next;
    position >>= 1;
  }
  const path = { root: level[0]!, pathElements, pathIndices };
  const proved = await snarkjs.groth16.fullProve({ ...buildProofInput({ secret, orderHash, path }) }, circuit.wasm, {
    type: 'mem',
    data: new Uint8Array(readFileSync(circuit.zkey)),
  });
  return { orderHash, proof: encodeProof(proved.proof), fields: { orderHash, nullifierHash: nullifierHashOf(secret), targetRoot: path.root } };
}

/** The unlock `side` would submit at `at`: the Maker's on the portal (chain A), the Bridger's on the AdManager (chain B). */
async function unlockAt(side: 'portal' | 'adManager', order: OrderParams, proved: Awaited<ReturnType<typeof proveDeposit>>, at: number) {
  const [chainId, target, account] = side === 'portal' ? [A, 'orderPortal' as const, maker!] : [B, 'adManager' as const, bridger!];
  const { call } = await signed(chainId, target, 'unlock', proved.fields, at, { orderParams: order, proof: proved.proof });
  return attempt(chainId, target, account, call, at);
}

const refundAt = (order: OrderParams, at: number) => attempt(A, 'orderPortal', stranger!, evmTimeoutCall('refund', order), at);
const releaseAt = (order: OrderParams, at: number) => attempt(B, 'adManager', stranger!, evmTimeoutCall('releaseLock', order), at);

beforeAll(async () => {
  devnet = await startDevnet({ ports: [0, 0], relayerEvmAddress: signers.evmAddress, domain });
  compiled = await loadDevnetArtifacts();
  for (const chainId of [A, B]) {
    providers[chainId] = new JsonRpcProvider(devnet.rpcUrls[chainId], undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
  }
  errors = new Interface(
    [...(compiled.adManager.abi as never[]), ...(compiled.orderPortal.abi as never[])].filter((e: { type?: string }) => e.type === 'error'),
  );
});

afterAll(async () => {
  for (const provider of Object.values(providers)) provider.destroy();
  await devnet?.stop();
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
});

describe('order times checked at creation and at lock', () => {
  it('refuses a deposit whose times leave too short a window, too small a margin or too long a lifetime', async () => {
    const adId = await createAd(1_000n);
    const now = Math.max(await chainTime(A), await chainTime(B)) + 60;
    const { minUnlockWindowSeconds: w, minRefundMarginSeconds: m, maxOrderLifetimeSeconds: max } = HTLC_LIMITS;
    const cases: OrderTimes[] = [
      { lockExpiry: String(now + w - 120), refundTime: String(now + w + m) },
      { lockExpiry: String(now + 2 * w), refundTime: String(now + 2 * w + m - 1) },
      { lockExpiry: String(now + 2 * w), refundTime: String(now + max + 3_600) },
    ];
    for (const times of cases) expect(await deposit(orderFor(adId, 5n, times))).toBe('InvalidTimes');
    expect(await deposit(orderFor(adId, 5n, { lockExpiry: String(now + 2 * w), refundTime: String(now + 2 * w + m) }))).toBe('ok');
  });

  it('refuses a lock later than lockExpiry minus the unlock window, accepts it one second earlier', async () => {
    const adId = await createAd(1_000n);
    const order = orderFor(adId, 10n, await timesNow());
    expect(await deposit(order)).toBe('ok');
    const lastLock = Number(order.lockExpiry) - HTLC_LIMITS.minUnlockWindowSeconds;
    const snapshot = await rpc(B, 'evm_snapshot');
    expect(await lock(order, lastLock + 1)).toBe('InvalidTimes');
    await rpc(B, 'evm_revert', [snapshot]);
    expect(await lock(order, lastLock)).toBe('ok');
    expect(orderWindows(order, lastLock)).toMatchObject({ lockOpen: true });
    expect(orderWindows(order, lastLock + 1)).toMatchObject({ lockOpen: false, adUnlockOpen: true });
  });

  it("refuses to lock an order that pays someone other than the ad's recorded recipient", async () => {
    const adId = await createAd(1_000n);
    const order = orderFor(adId, 10n, await timesNow(), { orderRecipient: stranger!.address });
    expect(await deposit(order)).toBe('ok');
    expect(await lock(order)).toBe('OrderMismatch');
    expect((await adOf(B, adId)).locked).toBe(0n);
  });
});

describe('timeouts when nobody unlocks', () => {
  it('returns the lock to the ad from lockExpiry and the deposit to the Bridger from refundTime, not a second earlier', async () => {
    const adId = await createAd(1_000n);
    const order = orderFor(adId, 300n, await timesNow());
    expect(await deposit(order)).toBe('ok');
    expect(await lock(order)).toBe('ok');
    const lockExpiry = Number(order.lockExpiry);
    const refundTime = Number(order.refundTime);

    expect(await releaseAt(order, lockExpiry - 1)).toBe('TooEarly');
    expect(await releaseAt(order, lockExpiry)).toBe('ok');
    expect(await adOf(B, adId)).toMatchObject({ available: 1_000n, locked: 0n });
    expect(await releaseAt(order, lockExpiry + 1)).toBe('WrongOrderState');

    const before = await balance(A, bridger!.address);
    expect(await refundAt(order, refundTime - 1)).toBe('TooEarly');
    expect(await refundAt(order, refundTime)).toBe('ok');
    expect((await balance(A, bridger!.address)) - before).toBe(300n);
    expect(await refundAt(order, refundTime + 1)).toBe('WrongOrderState');
  });

  it('pays a released lock to the Maker when the ad was closed meanwhile', async () => {
    const adId = await createAd(1_000n);
    const order = orderFor(adId, 400n, await timesNow());
    expect(await deposit(order)).toBe('ok');
    expect(await lock(order)).toBe('ok');
    const { call } = await signed(B, 'adManager', 'closeAd', { adId, to: maker!.address }, await chainTime(B));
    expect(await attempt(B, 'adManager', maker!, call)).toBe('ok');
    const before = await balance(B, maker!.address);
    expect(await releaseAt(order, Number(order.lockExpiry))).toBe('ok');
    expect((await balance(B, maker!.address)) - before).toBe(400n);
  });
});

describe('unlocks against timeouts (real proofs)', () => {
  it('lets both sides unlock in time; afterwards neither the release nor the refund moves anything', async () => {
    const adId = await createAd(1_000n);
    const secret = randomSecret();
    const order = orderFor(adId, 250n, await timesNow());
    expect(await deposit(order, secret)).toBe('ok');
    expect(await lock(order)).toBe('ok');
    const proved = await proveDeposit(order, secret);
    const [makerBefore, bridgerBefore] = [await balance(A, maker!.address), await balance(B, bridger!.address)];
    expect(await unlockAt('portal', order, proved, (await chainTime(A)) + 10)).toBe('ok');
    expect(await unlockAt('adManager', order, proved, (await chainTime(B)) + 10)).toBe('ok');
    expect((await balance(A, maker!.address)) - makerBefore).toBe(250n);
    expect((await balance(B, bridger!.address)) - bridgerBefore).toBe(250n);
    expect(await releaseAt(order, Number(order.lockExpiry))).toBe('WrongOrderState');
    expect(await refundAt(order, Number(order.refundTime))).toBe('WrongOrderState');
    expect(await adOf(B, adId)).toMatchObject({ available: 750n, locked: 0n });
  });

  it('at each boundary second exactly one of unlock and timeout succeeds, and a last-second Bridger unlock still leaves the Maker time', async () => {
    const adId = await createAd(1_000n);
    const secret = randomSecret();
    const order = orderFor(adId, 100n, await timesNow());
    expect(await deposit(order, secret)).toBe('ok');
    expect(await lock(order)).toBe('ok');
    const proved = await proveDeposit(order, secret);
    const lockExpiry = Number(order.lockExpiry);
    const refundTime = Number(order.refundTime);

    // Ad chain, at lockExpiry: the Bridger is too late, the Maker's release goes through.
    let snapshot = await rpc(B, 'evm_snapshot');
    expect(await unlockAt('adManager', order, proved, lockExpiry)).toBe('TooLate');
    expect(await releaseAt(order, lockExpiry)).toBe('ok');
    await rpc(B, 'evm_revert', [snapshot]);
    // One second earlier the Bridger unlocks, and the release is then refused.
    expect(await unlockAt('adManager', order, proved, lockExpiry - 1)).toBe('ok');
    expect(await releaseAt(order, lockExpiry)).toBe('WrongOrderState');

    // Order chain: the Maker reacts after the Bridger's last-second unlock; the refund is not open yet.
    expect(refundTime - (lockExpiry - 1)).toBeGreaterThan(HTLC_LIMITS.minRefundMarginSeconds);
    expect(await refundAt(order, lockExpiry)).toBe('TooEarly');
    snapshot = await rpc(A, 'evm_snapshot');
    expect(await unlockAt('portal', order, proved, refundTime)).toBe('TooLate');
    expect(await refundAt(order, refundTime)).toBe('ok');
    await rpc(A, 'evm_revert', [snapshot]);
    const makerBefore = await balance(A, maker!.address);
    expect(await unlockAt('portal', order, proved, refundTime - 1)).toBe('ok');
    expect((await balance(A, maker!.address)) - makerBefore).toBe(100n);
    expect(await refundAt(order, refundTime)).toBe('WrongOrderState');
  });
});

describe('contract set-up and token calls', () => {
  it('refuses to deploy either contract with a zero relayer', async () => {
    const wallet = new Wallet(deployer!.privateKey, providers[A]);
    const someVerifier = devnet.deployments[A]!.adManager;
    const adManager = new ContractFactory(compiled.adManager.abi as InterfaceAbi, compiled.adManager.bytecode, wallet);
    const portal = new ContractFactory(compiled.orderPortal.abi as InterfaceAbi, compiled.orderPortal.bytecode, wallet);
    const failure = (deploying: Promise<unknown>) => deploying.then(() => 'deployed', revertName);
    expect(await failure(adManager.deploy(ZeroAddress, someVerifier, 'ProofBridge', '1'))).toBe('ZeroRelayer');
    const { poseidon2: p2, poseidon3: p3 } = devnet.deployments[A]!;
    expect(await failure(portal.deploy(ZeroAddress, someVerifier, p2, p3, 'ProofBridge', '1'))).toBe('ZeroRelayer');
  });

  it('moves a token that returns nothing, and refuses one that returns false or has no code', async () => {
    const odd = await compileSolidity(['contracts/evm/test-contracts/OddERC20.sol']);
    const wallet = new Wallet(maker!.privateKey, providers[B]);
    const deploy = async (name: string) => {
      const factory = new ContractFactory(odd[name]!.abi as InterfaceAbi, odd[name]!.bytecode, wallet);
      const deployed = await factory.deploy();
      await deployed.waitForDeployment();
      return deployed as unknown as Contract;
    };
    const noReturn = await deploy('NoReturnERC20');
    const falseReturn = await deploy('FalseReturnERC20');
    await (await noReturn.getFunction('mint')(maker!.address, 1_000n)).wait();
    await (await noReturn.getFunction('approve')(devnet.deployments[B]!.adManager, 1_000n)).wait();

    const createWith = async (token: string) => {
      const adId = randomUUID();
      const { call } = await signed(B, 'adManager', 'createAd', {
        adId, adCreator: maker!.address, adToken: token, initialAmount: 600n, orderChainId: A, adRecipient: maker!.address,
      }, await chainTime(B));
      return { adId, outcome: await attempt(B, 'adManager', maker!, call) };
    };
    const created = await createWith(await noReturn.getAddress());
    expect(created.outcome).toBe('ok');
    expect(await noReturn.getFunction('balanceOf')(devnet.deployments[B]!.adManager)).toBe(600n);
    const { call } = await signed(B, 'adManager', 'withdrawFromAd', { adId: created.adId, amount: 250n, to: stranger!.address }, await chainTime(B));
    expect(await attempt(B, 'adManager', maker!, call)).toBe('ok');
    expect(await noReturn.getFunction('balanceOf')(stranger!.address)).toBe(250n);

    expect((await createWith(await falseReturn.getAddress())).outcome).toBe('TransferFailed');
    expect((await createWith(stranger!.address)).outcome).toBe('TransferFailed');
  });
});
