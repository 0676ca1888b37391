import { Keypair } from '@stellar/stellar-sdk';
import { randomUUID } from 'node:crypto';
import { Contract, Interface, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { evmContractCall, type CallExtras } from '../../chains/evm/call-args.ts';
import { readPortalDeposits, readPortalRoot } from '../../chains/evm/portal.ts';
import { createEvmClient } from '../../chains/evm/rpc.ts';
import { verifyEvmTransaction } from '../../chains/evm/verify.ts';
import { computeOrderHash, randomSalt, type OrderParams } from '../../chains/order.ts';
import type { ActionFields, ActionName } from '../../chains/request-schema.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners } from '../../chains/signers.ts';
import { computeOrderTimes } from '../../chains/timing.ts';
import type { ProverBackend } from '../../prover/backend.ts';
import { nullifierHashOf, randomSecret, secretCommitment } from '../../prover/commitments.ts';
import { MerkleTreeStore, type TreeKey } from '../../prover/merkle/store.ts';
import { ProverPool } from '../../prover/pool.ts';
import { buildProofInput } from '../../prover/proof-input.ts';
import { encodeProof } from '../../prover/solidity.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { loadDevnetArtifacts } from './artifacts.ts';
import { anvilAccounts, startDevnet, type Devnet } from '../../devnet/index.ts';

/**
 * One whole trade on the devnet with a real Groth16 proof: the Maker's ad on chain B, the
 * Bridger's deposit on chain A mirrored into the prover's PostgreSQL tree, the lock, and both
 * unlocks verified by the contracts' Groth16Verifier. Run once per prover backend (the proof pool
 * with snarkjs, then with the native prover), each on its own devnet and database.
 */
const nativeBinary = inject('nativeProver');
const domain = { name: 'ProofBridge', version: '1' };
const signers = createRelayerSigners(
  { relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: Keypair.random().secret() },
  domain,
);
const [, maker, bridger] = anvilAccounts(3);
const A = '31337'; // order chain
const B = '31338'; // ad chain

let devnet: Devnet;
let db: TestDatabase;
let pool: ProverPool;
let abi: Record<'adManager' | 'orderPortal' | 'token', InterfaceAbi>;
let errors: Interface;
const providers: JsonRpcProvider[] = [];

function contract(chainId: string, name: 'adManager' | 'orderPortal' | 'testErc20', account: { privateKey: string }): Contract {
  const provider = new JsonRpcProvider(devnet.rpcUrls[chainId], undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
  providers.push(provider);
  return new Contract(devnet.deployments[chainId]![name], abi[name === 'testErc20' ? 'token' : name], new Wallet(account.privateKey, provider));
}

/** Signs `action` for the chain's contract and submits it from `account`; returns the tx hash and the signed data. */
async function submit<T extends ActionName>(
  chainId: string,
  target: 'adManager' | 'orderPortal',
  account: { privateKey: string },
  action: T,
  fields: ActionFields<T>,
  extras: CallExtras = {},
) {
  const data = await buildSignedCallData({
    target: { kind: 'EVM', chainId, contractAddress: devnet.deployments[chainId]![target] },
    action,
    fields,
    signers,
    ttlSeconds: 600,
  });
  const call = evmContractCall(action, data, extras);
  try {
    const tx = await contract(chainId, target, account).getFunction(call.functionName)(...call.args, { value: call.value });
    await tx.wait();
    return { txHash: tx.hash as string, data };
  } catch (error) {
    const revert = (error as { data?: string }).data;
    const name = revert ? errors.parseError(revert)?.name : undefined;
    throw name ? new Error(`reverted: ${name}`) : error;
  }
}

async function approve(chainId: string, account: { privateKey: string }, spender: 'adManager' | 'orderPortal', amount: bigint) {
  await (await contract(chainId, 'testErc20', account).getFunction('approve')(devnet.deployments[chainId]![spender], amount)).wait();
}

const balance = (chainId: string, who: string) =>
  contract(chainId, 'testErc20', maker!).getFunction('balanceOf')(who) as Promise<bigint>;

describe('a trade settled with a real proof from the snarkjs prover', () => settlement('snarkjs'));
describe('a trade settled with a real proof from the native prover', () => settlement('native'));

function settlement(backend: ProverBackend) {
  beforeAll(async () => {
    pool = new ProverPool({ size: 1, backend, nativeBinary: nativeBinary ?? undefined, registry: new Registry() });
    [devnet, db] = await Promise.all([
      startDevnet({ ports: [0, 0], relayerEvmAddress: signers.evmAddress, domain }),
      createTestDatabase(),
      pool.ready(),
    ]);
    const compiled = await loadDevnetArtifacts();
    abi = {
      adManager: compiled.adManager.abi as InterfaceAbi,
      orderPortal: compiled.orderPortal.abi as InterfaceAbi,
      token: compiled.testErc20.abi as InterfaceAbi,
    };
    errors = new Interface([...(compiled.adManager.abi as never[]), ...(compiled.orderPortal.abi as never[])].filter((e: { type?: string }) => e.type === 'error'));
  });

  afterAll(async () => {
    for (const provider of providers) provider.destroy();
    providers.length = 0;
    await Promise.all([devnet?.stop(), db?.drop(), pool?.close()]);
  });

  const amount = 250_000n;
  const adId = randomUUID();
  const secret = randomSecret();
  let order: OrderParams;
  let orderHash: string;
  let proof: string;
  let root: bigint;

  it('mirrors the portal into the prover tree, whose root equals the contract root', async () => {
    expect(devnet.deployments[A]!.verifier).toBeDefined();
    await approve(B, maker!, 'adManager', 1_000_000n);
    await submit(B, 'adManager', maker!, 'createAd', {
      adId, adCreator: maker!.address, adToken: devnet.deployments[B]!.testErc20, initialAmount: 1_000_000n, orderChainId: A, adRecipient: maker!.address,
    });
    order = {
      orderChainToken: devnet.deployments[A]!.testErc20, adChainToken: devnet.deployments[B]!.testErc20, amount: amount.toString(),
      orderAmount: amount.toString(), adAmount: amount.toString(),
      bridger: bridger!.address, orderRecipient: maker!.address, adId, adCreator: maker!.address, adRecipient: bridger!.address,
      salt: randomSalt(), orderChainId: A, orderPortal: devnet.deployments[A]!.orderPortal, adChainId: B, adManager: devnet.deployments[B]!.adManager,
      ...computeOrderTimes(Math.floor(Date.now() / 1000)),
    };
    orderHash = computeOrderHash(order, domain);
    await approve(A, bridger!, 'orderPortal', 10n ** 12n);
    // Other traders' deposits around ours, so the path has real siblings.
    for (let i = 0; i < 3; i++) {
      const other = { ...order, salt: randomSalt(), amount: '1', orderAmount: '1' };
      await submit(A, 'orderPortal', bridger!, 'createOrder', { orderHash: computeOrderHash(other, domain), secretCommitment: secretCommitment(randomSecret()) }, { orderParams: other });
    }
    await submit(A, 'orderPortal', bridger!, 'createOrder', { orderHash, secretCommitment: secretCommitment(secret) }, { orderParams: order });

    const web3 = createEvmClient(devnet.rpcUrls[A]!);
    const deposits = await readPortalDeposits(web3, devnet.deployments[A]!.orderPortal, 0n, BigInt(await web3.eth.getBlockNumber()));
    const key: TreeKey = { chainId: A, portalAddress: devnet.deployments[A]!.orderPortal };
    const store = new MerkleTreeStore(db.knex);
    // Arrival order does not matter to the store: insert in reverse.
    for (const deposit of [...deposits].reverse()) await store.insertLeaf(key, deposit.leafIndex, deposit.leaf);
    const onChain = await readPortalRoot(web3, devnet.deployments[A]!.orderPortal);
    const state = await store.getState(key);
    expect(state).toMatchObject({ leafCount: onChain.leafCount, root: onChain.root });

    const ours = deposits.find((deposit) => deposit.orderHash === orderHash)!;
    const path = await store.getPath(key, ours.leafIndex);
    root = path.root;
    const proved = await pool.prove(buildProofInput({ secret, orderHash, path }));
    proof = encodeProof(proved.proof);
  });

  it('locks on the ad chain, then both unlocks pay out and verify', async () => {
    await submit(B, 'adManager', maker!, 'lockForOrder', { orderHash }, { orderParams: order });
    const nullifierHash = nullifierHashOf(secret);
    const unlockFields = { orderHash, nullifierHash, targetRoot: root };

    const makerBefore = await balance(A, maker!.address);
    const onPortal = await submit(A, 'orderPortal', maker!, 'unlock', unlockFields, { orderParams: order, proof });
    expect((await balance(A, maker!.address)) - makerBefore).toBe(amount);
    await expect(
      verifyEvmTransaction(createEvmClient(devnet.rpcUrls[A]!), {
        txHash: onPortal.txHash, contractAddress: devnet.deployments[A]!.orderPortal, event: 'OrderUnlocked',
        args: { orderHash, reqHash: onPortal.data.reqHash, nullifierHash }, confirmations: 1,
      }),
    ).resolves.toMatchObject({ args: { recipient: maker!.address, amount: amount.toString() } });

    const bridgerBefore = await balance(B, bridger!.address);
    await submit(B, 'adManager', bridger!, 'unlock', unlockFields, { orderParams: order, proof });
    expect((await balance(B, bridger!.address)) - bridgerBefore).toBe(amount);
  });

  it('pays an order out once: a second unlock with a fresh request reverts', async () => {
    const fields = { orderHash, nullifierHash: nullifierHashOf(secret), targetRoot: root };
    await expect(submit(B, 'adManager', bridger!, 'unlock', fields, { orderParams: order, proof })).rejects.toThrow(/WrongOrderState/);
  });

  it('spends a nullifier once: another order deposited with the same secret cannot unlock', async () => {
    const twin = { ...order, salt: randomSalt() };
    const twinHash = computeOrderHash(twin, domain);
    await submit(A, 'orderPortal', bridger!, 'createOrder', { orderHash: twinHash, secretCommitment: secretCommitment(secret) }, { orderParams: twin });
    const web3 = createEvmClient(devnet.rpcUrls[A]!);
    const key: TreeKey = { chainId: A, portalAddress: devnet.deployments[A]!.orderPortal };
    const store = new MerkleTreeStore(db.knex);
    const deposits = await readPortalDeposits(web3, key.portalAddress, 0n, BigInt(await web3.eth.getBlockNumber()));
    await store.insertLeaves(key, deposits.map((d) => ({ index: d.leafIndex, leaf: d.leaf })));
    const path = await store.getPath(key, deposits.find((d) => d.orderHash === twinHash)!.leafIndex);
    const proved = await pool.prove(buildProofInput({ secret, orderHash: twinHash, path }));
    const fields = { orderHash: twinHash, nullifierHash: nullifierHashOf(secret), targetRoot: path.root };
    await expect(
      submit(A, 'orderPortal', maker!, 'unlock', fields, { orderParams: twin, proof: encodeProof(proved.proof) }),
    ).rejects.toThrow(/NullifierSpent/);
  });

  it('rejects a proof for another nullifier and a root the portal never had', async () => {
    const other = { ...order, salt: randomSalt() };
    const otherHash = computeOrderHash(other, domain);
    const otherSecret = randomSecret();
    await submit(A, 'orderPortal', bridger!, 'createOrder', { orderHash: otherHash, secretCommitment: secretCommitment(otherSecret) }, { orderParams: other });
    await expect(
      submit(A, 'orderPortal', maker!, 'unlock', { orderHash: otherHash, nullifierHash: nullifierHashOf(otherSecret), targetRoot: root }, { orderParams: other, proof }),
    ).rejects.toThrow(/InvalidProof/);
    await expect(
      submit(A, 'orderPortal', maker!, 'unlock', { orderHash: otherHash, nullifierHash: nullifierHashOf(otherSecret), targetRoot: 12345n }, { orderParams: other, proof }),
    ).rejects.toThrow(/UnknownRoot/);
  });
}
