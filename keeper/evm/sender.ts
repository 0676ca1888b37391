import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { RpcUnavailableError } from '../../chains/errors.ts';
import type { RelayerSigner } from '../../chains/signers.ts';
import {
  finishKeeperSend, insertAttempt, markBroadcast, noteKeeperError, openKeeperSends, recordFirstAttempt,
  recordInclusion, withKeeperFence, type KeeperAttemptRow, type KeeperFence, type KeeperSendRow,
} from '../../db/repositories/keeper-outbox.ts';
import { createLeasedSender, type KeeperSender } from '../leased-pass.ts';
import type { KeeperMetrics } from '../metrics.ts';
import { initialFees, replacementFees } from './fees.ts';
import { EvmRpcAnswerError, type KeeperEvmRpc } from './rpc.ts';
import { signEvmTransaction } from './sign.ts';

const GWEI = 1_000_000_000n;
/** The tip offered when the node suggests none. */
const FALLBACK_TIP = GWEI;

/** What one EVM keeper account's sender needs. */
export interface EvmSenderDeps {
  knex: Knex;
  rpc: KeeperEvmRpc;
  signer: RelayerSigner;
  /** The registry chain id (the EIP-155 chain id) and its finality depth (confirmations). */
  chain: { chainId: string; confirmations: number };
  settings: { replaceAfterSeconds: number; maxFeeGwei: number; leaseSeconds: number };
  /** This sender's name in the lease (one per process and account). */
  owner: string;
  metrics?: KeeperMetrics;
  logger?: Logger;
  /** Unix milliseconds; for tests. */
  now?: () => number;
}

/** One keeper account's sender on one EVM chain: see `KeeperSender` and `createEvmKeeperSender`. */
export type EvmKeeperSender = KeeperSender;

/**
 * The sender of the keeper's EVM account (`deps.signer`'s address) on `deps.chain`. Exactly one
 * transaction per send can land: every transaction of a send carries the nonce the database gave it.
 */
export function createEvmKeeperSender(deps: EvmSenderDeps): EvmKeeperSender {
  const cappedReported = new Set<string>();
  const nonceUsedSince = new Map<string, bigint>();
  const account = async () => (await deps.signer.evmAddress()).toLowerCase();
  return createLeasedSender({ ...deps, chainId: deps.chain.chainId, leaseSeconds: deps.settings.leaseSeconds }, account, async (fence) => {
    const context = { ...deps, fence, cappedReported, nonceUsedSince };
    deps.metrics?.balance(deps.chain.chainId, await deps.rpc.balance(fence.account));
    const head = await deps.rpc.blockNumber();
    for (const { send, attempts } of await openKeeperSends(deps.knex, deps.chain.chainId, fence.account)) {
      if (send.status === 'sent') await followSent(context, send, attempts, head);
      else await sendFirst(context, send);
    }
  });
}

type Context = EvmSenderDeps & {
  fence: KeeperFence;
  cappedReported: Set<string>;
  /** Per send: the head at which its nonce was first seen used with none of its transactions found. */
  nonceUsedSince: Map<string, bigint>;
};

const capOf = (context: Context) => BigInt(context.settings.maxFeeGwei) * GWEI;

/** A queued send: its gas checked, then nonce, signature and record in one fenced transaction, then the broadcast. */
async function sendFirst(context: Context, send: KeeperSendRow): Promise<void> {
  const { rpc, fence } = context;
  if (send.notAfter !== null && (await rpc.latestTime()) >= send.notAfter) {
    // Too late on the chain's own clock: it could be mined after the contract stops taking it.
    const error = `its window closed at ${send.notAfter} (chain time) before it was sent`;
    await withKeeperFence(context.knex, fence, (trx) => finishKeeperSend(trx, send.id, { status: 'expired', error }));
    context.metrics?.send(fence.chainId, send.action, 'expired');
    context.logger?.warn({ sendId: send.id, tradeId: send.tradeId, action: send.action, side: send.side }, `keeper send expired: ${error}`);
    return;
  }
  let gas: bigint;
  try {
    gas = await rpc.estimateGas({ from: fence.account, to: send.to, data: send.data, value: send.value });
  } catch (error) {
    if (!(error instanceof EvmRpcAnswerError && error.reverts)) throw error;
    // Refused before it took a nonce: a call that would revert is never sent, and leaves no gap.
    await withKeeperFence(context.knex, fence, (trx) => finishKeeperSend(trx, send.id, { status: 'failed', error: `would revert: ${error.message}` }));
    context.metrics?.send(fence.chainId, send.action, 'refused');
    context.logger?.warn({ sendId: send.id, tradeId: send.tradeId, action: send.action, side: send.side, err: error }, 'keeper send refused: it would revert');
    return;
  }
  const gasLimit = gas + gas / 5n;
  const fees = initialFees(await rpc.baseFee(), await rpc.priorityFee(FALLBACK_TIP), capOf(context));
  const mined = await rpc.nonce(fence.account, 'latest');
  const signed = await withKeeperFence(context.knex, fence, async (trx, next) => {
    // The database hands out nonces; the chain's count only moves it forward (a nonce used elsewhere).
    const nonce = next === null || next < mined ? mined : next;
    const tx = { chainId: BigInt(fence.chainId), nonce, to: send.to, data: send.data, value: send.value, gasLimit, ...fees };
    const signedTx = await signEvmTransaction(context.signer, tx);
    await recordFirstAttempt(trx, fence, { id: send.id, nonce, gasLimit }, { ...signedTx, ...fees });
    return signedTx;
  });
  context.logger?.info({ sendId: send.id, tradeId: send.tradeId, action: send.action, txHash: signed.txHash }, 'keeper transaction signed and recorded');
  if (send.queuedAt) context.metrics?.sendDelay(fence.chainId, send.action, ((context.now?.() ?? Date.now()) - send.queuedAt.getTime()) / 1000);
  await broadcast(context, send.id, signed);
}

/**
 * Whether a send's nonce has been seen used, with none of its transactions found, for longer than the
 * chain's finality depth: a provider behind another (the receipt not indexed yet where the count already
 * moved) is waited out, not taken for the account used elsewhere.
 */
function nonceUsedLongEnough(context: Context, sendId: string, head: bigint): boolean {
  const since = context.nonceUsedSince.get(sendId);
  if (since === undefined) {
    context.nonceUsedSince.set(sendId, head);
    return false;
  }
  return head - since > BigInt(context.chain.confirmations);
}

/**
 * A sent send: final at depth (confirmed or reverted), still shallow (noted), reorged away (sent
 * again), stuck past KEEPER_REPLACE_AFTER_SECONDS (replaced, same nonce, higher fee), or not known to
 * the node (broadcast again: the same bytes, so never a second transaction).
 */
async function followSent(context: Context, send: KeeperSendRow, attempts: KeeperAttemptRow[], head: bigint): Promise<void> {
  const { rpc, fence, knex } = context;
  // Read before the receipts: a transaction of this send mined after this read is found among them.
  const mined = await rpc.nonce(fence.account, 'latest');
  for (const attempt of [...attempts].reverse()) {
    const receipt = await rpc.receipt(attempt.txHash);
    if (!receipt) continue;
    if (head - receipt.blockNumber + 1n >= BigInt(context.chain.confirmations)) {
      const status = receipt.success ? 'confirmed' : 'reverted';
      const outcome = { status, txHash: receipt.txHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash } as const;
      await withKeeperFence(knex, fence, (trx) => finishKeeperSend(trx, send.id, outcome));
      context.metrics?.send(fence.chainId, send.action, status);
      context.logger?.info({ sendId: send.id, tradeId: send.tradeId, action: send.action, txHash: receipt.txHash, status }, 'keeper transaction final');
    } else if (send.blockNumber !== receipt.blockNumber || send.txHash !== receipt.txHash) {
      await withKeeperFence(knex, fence, (trx) => recordInclusion(trx, send.id, receipt));
    }
    context.nonceUsedSince.delete(send.id);
    return;
  }
  if (send.blockNumber !== null) {
    // Seen mined, now in no block: a reorganisation took it. Its nonce is free again; send it again.
    context.logger?.warn({ sendId: send.id, txHash: send.txHash, block: String(send.blockNumber) }, 'keeper transaction reorged away; sending it again');
    await withKeeperFence(knex, fence, (trx) => recordInclusion(trx, send.id, null));
  }
  const nonce = send.nonce!;
  if (mined > nonce && !nonceUsedLongEnough(context, send.id, head)) return;
  if (mined > nonce) {
    // The nonce is used, by no transaction the keeper signed for this send (each is recorded before it is
    // broadcast), and none appeared while the chain went past its finality depth: the account was used
    // elsewhere. Nothing of this send can land any more.
    const error = `nonce ${nonce} was used by a transaction the keeper did not record`;
    await withKeeperFence(knex, fence, (trx) => finishKeeperSend(trx, send.id, { status: 'failed', error }));
    context.metrics?.send(fence.chainId, send.action, 'failed');
    context.logger?.error({ sendId: send.id, tradeId: send.tradeId }, `keeper send failed: ${error}`);
    return;
  }
  const last = attempts.at(-1)!;
  const now = context.now?.() ?? Date.now();
  if (now - last.createdAt.getTime() >= context.settings.replaceAfterSeconds * 1_000) {
    const fees = replacementFees(last, await rpc.baseFee(), await rpc.priorityFee(FALLBACK_TIP), capOf(context));
    if (fees) {
      const signed = await withKeeperFence(knex, fence, async (trx) => {
        const tx = { chainId: BigInt(fence.chainId), nonce, to: send.to, data: send.data, value: send.value, gasLimit: send.gasLimit!, ...fees };
        const signedTx = await signEvmTransaction(context.signer, tx);
        await insertAttempt(trx, send.id, { ...signedTx, ...fees });
        return signedTx;
      });
      context.metrics?.send(fence.chainId, send.action, 'replaced');
      const replaced = { sendId: send.id, replaced: last.txHash, txHash: signed.txHash, maxFeePerGas: String(fees.maxFeePerGas) };
      context.logger?.info(replaced, 'keeper transaction replaced with a higher fee');
      await broadcast(context, send.id, signed);
      return;
    }
    if (!context.cappedReported.has(send.id)) {
      context.cappedReported.add(send.id);
      context.metrics?.send(fence.chainId, send.action, 'capped');
      context.logger?.error({ sendId: send.id, txHash: last.txHash }, 'keeper transaction stuck at KEEPER_MAX_FEE_GWEI: not replaced again');
    }
  }
  if (last.broadcastAt === null || (await rpc.nonce(fence.account, 'pending')) <= nonce) await broadcast(context, send.id, last);
}

/** Hands a recorded transaction to the providers; what they answer only informs the next pass's receipts. */
async function broadcast(context: Context, sendId: string, signed: { raw: string; txHash: string }): Promise<void> {
  try {
    await context.rpc.sendRaw(signed.raw);
    await markBroadcast(context.knex, signed.txHash);
  } catch (error) {
    if (error instanceof EvmRpcAnswerError) {
      // "already known", "nonce too low" (it or a sibling is mined), "underpriced": the receipts decide.
      if (/already known|known transaction|already imported/i.test(error.message)) await markBroadcast(context.knex, signed.txHash);
      await noteKeeperError(context.knex, sendId, error.message);
      return;
    }
    if (error instanceof RpcUnavailableError) {
      await noteKeeperError(context.knex, sendId, error.message);
      throw error;
    }
    throw error;
  }
}
