import { randomUUID } from 'node:crypto';
import { Keypair, rpc, SorobanDataBuilder, TransactionBuilder, type xdr } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { computeOrderHash, randomSalt, type OrderParams } from '../../chains/order.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners, type RelayerSigners } from '../../chains/signers.ts';
import { stellarContractCall } from '../../chains/stellar/call-args.ts';
import type { StellarPortalDeposit } from '../../chains/stellar/portal.ts';
import { computeOrderTimes } from '../../chains/timing.ts';
import { STELLAR_DEVNET_CHAIN_ID } from '../../devnet/registry-file.ts';
import { readContract, sendAndWait, StellarSubmitError, submitOperation } from '../../devnet/stellar/client.ts';
import { deployStellarContracts, type StellarDeployment } from '../../devnet/stellar/deploy.ts';
import { startStellarNode, type StellarNode } from '../../devnet/stellar/node.ts';
import { leafOf, randomSecret, secretCommitment } from '../../prover/commitments.ts';

/**
 * The local Soroban network (devnet/stellar: the real host running the contracts' wasm) with the
 * AdManager and OrderPortal deployed for a relayer of the test's own, and the real transactions
 * chains/ and trades/ tests verify and read: deposits into the OrderPortal, an ad on the
 * AdManager, a deposit that fails in its ledger.
 */
export interface SorobanTestNetwork {
  node: StellarNode;
  server: rpc.Server;
  passphrase: string;
  deployment: StellarDeployment;
  /** The relayer the contracts trust (its ed25519 key signs the requests). */
  signers: RelayerSigners;
  stop(): Promise<void>;
}

export const CHAIN_ID = STELLAR_DEVNET_CHAIN_ID;

export async function startSorobanTestNetwork(): Promise<SorobanTestNetwork> {
  const node = await startStellarNode({ ledgerMs: 250 });
  const server = new rpc.Server(node.rpcUrl, { allowHttp: true });
  const signers = createRelayerSigners(
    { relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: Keypair.random().secret() },
    { name: 'ProofBridge', version: '1' },
  );
  const deployment = await deployStellarContracts({
    server, networkPassphrase: node.networkPassphrase, relayer: signers.stellar.publicKey(), chainId: BigInt(CHAIN_ID), domain: signers.domain,
  });
  return { node, server, passphrase: node.networkPassphrase, deployment, signers, stop: () => node.stop() };
}

/** One deposit as the OrderPortal recorded it: the fields its OrderCreated event carries, `root` its `current_root` right after. */
export type PortalDeposit = StellarPortalDeposit;

/** A signed createOrder for a fresh order of `amount` stroops of XLM from `bridger` into the portal, times from the ledger clock. */
async function signedDeposit(net: SorobanTestNetwork, bridger: Keypair, amount: bigint) {
  const { closeTime } = await net.node.closeLedger();
  const orderParams: OrderParams = {
    orderChainToken: net.deployment.xlm, adChainToken: `0x${'11'.repeat(20)}`, amount: amount.toString(), orderAmount: amount.toString(), adAmount: amount.toString(),
    bridger: bridger.publicKey(), orderRecipient: net.deployment.deployer, adId: randomUUID(), adCreator: `0x${'22'.repeat(20)}`,
    adRecipient: `0x${'33'.repeat(20)}`, salt: randomSalt(), orderChainId: CHAIN_ID, orderPortal: net.deployment.orderPortal,
    adChainId: '31338', adManager: `0x${'44'.repeat(20)}`, ...computeOrderTimes(closeTime),
  };
  const orderHash = computeOrderHash(orderParams, net.signers.domain);
  const commitment = secretCommitment(randomSecret());
  const signed = await buildSignedCallData({
    target: { kind: 'STELLAR', chainId: CHAIN_ID, contractAddress: net.deployment.orderPortal, networkPassphrase: net.passphrase },
    action: 'createOrder',
    fields: { orderHash, secretCommitment: commitment.toString() },
    signers: net.signers,
    ttlSeconds: 600,
  });
  return { orderParams, orderHash, commitment, signed, operation: stellarContractCall('createOrder', signed, { orderParams }) };
}

/** `bridger` deposits into the portal (one Soroban transaction); resolves with what the portal recorded. */
export async function depositOnPortal(net: SorobanTestNetwork, bridger: Keypair, amount = 1_000_000n): Promise<PortalDeposit> {
  return (await depositWithOrder(net, bridger, amount)).deposit;
}

/** `depositOnPortal`, with the order deposited for (what its refund or unlock takes). */
export async function depositWithOrder(net: SorobanTestNetwork, bridger: Keypair, amount = 1_000_000n): Promise<{ deposit: PortalDeposit; orderParams: OrderParams }> {
  const { orderParams, orderHash, commitment, signed, operation } = await signedDeposit(net, bridger, amount);
  const submitted = await submitOperation(net.server, net.passphrase, bridger, operation);
  const view = (fn: string) => readContract(net.server, net.passphrase, bridger.publicKey(), net.deployment.orderPortal, fn);
  const [root, count] = await Promise.all([view('current_root'), view('next_leaf_index')]);
  const deposit = {
    txHash: submitted.hash, ledger: submitted.ledger, orderHash, reqHash: signed.reqHash, leafIndex: Number(count) - 1,
    leaf: leafOf(orderHash, commitment), secretCommitment: commitment, root: BigInt(root),
  };
  return { deposit, orderParams };
}

/**
 * Submits `operation` from `source` so that it fails in its ledger (status FAILED on chain):
 * simulated and assembled as any dApp does, then sent with an instruction budget far below what
 * the simulation measured, so the host runs out of it. Resolves with its hash; only the fee and
 * sequence number changed.
 */
export async function submitStarved(server: rpc.Server, passphrase: string, source: Keypair, operation: xdr.Operation): Promise<string> {
  const built = new TransactionBuilder(await server.getAccount(source.publicKey()), { fee: '100', networkPassphrase: passphrase })
    .addOperation(operation).setTimeout(60).build();
  const prepared = await server.prepareTransaction(built);
  const data = prepared.toEnvelope().v1().tx().ext().sorobanData();
  const starved = new SorobanDataBuilder(data.toXDR('base64')).setResources(1_000, data.resources().diskReadBytes(), data.resources().writeBytes()).build();
  const tx = TransactionBuilder.cloneFrom(prepared, { fee: prepared.fee, sorobanData: starved, networkPassphrase: passphrase }).build();
  tx.sign(source);
  const outcome = await sendAndWait(server, tx).catch((error: unknown) => error);
  if (!(outcome instanceof StellarSubmitError) || !outcome.resultXdr) throw new Error(`expected the starved transaction to fail in its ledger, got ${String(outcome)}`);
  return outcome.hash!;
}

/** A deposit into the portal that fails in its ledger (`submitStarved`); resolves with its hash. */
export async function failedDeposit(net: SorobanTestNetwork, bridger: Keypair): Promise<string> {
  const { operation } = await signedDeposit(net, bridger, 1_000_000n);
  return submitStarved(net.server, net.passphrase, bridger, operation);
}

/** `maker` creates an XLM ad on the AdManager (a transaction on another contract than the portal). */
export async function createAdOnManager(net: SorobanTestNetwork, maker: Keypair): Promise<{ txHash: string; reqHash: string; adId: string }> {
  const adId = randomUUID();
  const signed = await buildSignedCallData({
    target: { kind: 'STELLAR', chainId: CHAIN_ID, contractAddress: net.deployment.adManager, networkPassphrase: net.passphrase },
    action: 'createAd',
    fields: { adId, adCreator: maker.publicKey(), adToken: net.deployment.xlm, initialAmount: '1000000', orderChainId: '31337', adRecipient: `0x${'55'.repeat(20)}` },
    signers: net.signers,
    ttlSeconds: 600,
  });
  const submitted = await submitOperation(net.server, net.passphrase, maker, stellarContractCall('createAd', signed));
  return { txHash: submitted.hash, reqHash: signed.reqHash, adId };
}
