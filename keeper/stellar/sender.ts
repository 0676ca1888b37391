import { Address, rpc as sorobanRpc, xdr } from '@stellar/stellar-sdk';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { RelayerSigner } from '../../chains/signers.ts';
import {
  finishKeeperSend, giveNonceBack, insertAttempt, markBroadcast, noteKeeperError, openKeeperSends, recordFirstAttempt,
  recordInclusion, recordRebuiltAttempt, withKeeperFence, type KeeperAttemptRow, type KeeperFence, type KeeperSendRow,
} from '../../db/repositories/keeper-outbox.ts';
import { createLeasedSender, type KeeperSender } from '../leased-pass.ts';
import type { KeeperMetrics } from '../metrics.ts';
import { stellarCallOf, StellarCallDataError } from './call.ts';
import { feeBumpInclusionFee, feeBumpTotal, initialInclusionFee } from './fees.ts';
import type { KeeperStellarRpc, StellarAccountState, StellarLedger, StellarSendAnswer } from './rpc.ts';
import { JsonRpcAnswerError } from '../json-rpc.ts';
import {
  buildDraftTransaction, buildFeeBump, buildInnerTransaction, parseEnvelope, resourceFeeOf, signStellarTransaction, type SignedStellarTransaction,
} from './sign.ts';

/** Stellar's native balance has 7 decimals (stroops). */
const STROOP_DECIMALS = 7;

/** The shortest validity (seconds of ledger time) of a keeper transaction: room for a few fee bumps before it expires. */
const MIN_VALIDITY_SECONDS = 300n;

/** What one Stellar keeper account's sender needs. */
export interface StellarSenderDeps {
  knex: Knex;
  rpc: KeeperStellarRpc;
  signer: RelayerSigner;
  /** The registry chain id, its finality depth (a closed ledger is final: 1 is enough) and its network passphrase. */
  chain: { chainId: string; confirmations: number; networkPassphrase: string };
  /** KEEPER_REPLACE_AFTER_SECONDS, KEEPER_STELLAR_MAX_FEE_STROOPS, KEEPER_LEASE_SECONDS. */
  settings: { replaceAfterSeconds: number; maxFeeStroops: number; leaseSeconds: number };
  /** This sender's name in the lease (one per process and account). */
  owner: string;
  metrics?: KeeperMetrics;
  logger?: Logger;
  /** Unix milliseconds, for the replacement timer only (windows are judged on ledger time); for tests. */
  now?: () => number;
}

/** The keeper's Stellar account does not exist on the chain (never funded): it can send nothing. */
export class KeeperAccountMissingError extends Error {
  readonly code = 'KEEPER_ACCOUNT_MISSING';
}

/**
 * The sender of the keeper's Stellar account (`deps.signer`'s G... key) on `deps.chain`, one pass at
 * a time under the account's lease. At most one transaction of the account is in flight: Stellar
 * sequence numbers must follow one another and validators queue one transaction per account, so a
 * queued send waits until the one before is final or given up. Exactly one transaction per send can
 * land: all of a send's transactions (the inner one, its fee bumps) share one sequence number, and a
 * new number is given only once the old one's time bounds have passed and the account shows it unused.
 */
export function createStellarKeeperSender(deps: StellarSenderDeps): KeeperSender {
  const cappedReported = new Set<string>();
  const { chainId } = deps.chain;
  return createLeasedSender({ ...deps, chainId, leaseSeconds: deps.settings.leaseSeconds }, () => deps.signer.stellarPublicKey(), async (fence) => {
    const context: Context = { ...deps, fence, cappedReported };
    // The account first, then the ledger, then the transactions: a sequence number the account shows
    // used was used in a ledger the later lookups see.
    const state = await deps.rpc.account(fence.account);
    if (!state) {
      deps.metrics?.balance(chainId, 0n, STROOP_DECIMALS);
      throw new KeeperAccountMissingError(`the keeper's Stellar account ${fence.account} does not exist on chain ${chainId}: fund it`);
    }
    deps.metrics?.balance(chainId, state.balance, STROOP_DECIMALS);
    const ledger = await deps.rpc.latestLedger();
    const open = await openKeeperSends(deps.knex, chainId, fence.account);
    let inFlight = false;
    for (const { send, attempts } of open) {
      if (send.status === 'sent' && (await followSent(context, send, attempts, state, ledger))) inFlight = true;
    }
    if (inFlight) return;
    for (const { send } of open) {
      if (send.status === 'queued' && (await sendFirst(context, send, ledger))) return;
    }
  });
}

type Context = StellarSenderDeps & { fence: KeeperFence; cappedReported: Set<string> };

const capOf = (context: Context) => BigInt(context.settings.maxFeeStroops);

/** The ledger close time up to which a transaction built now stays valid: never at or past the send's `not_after`. */
function maxTimeOf(context: Context, send: KeeperSendRow, ledger: StellarLedger): bigint {
  const validity = BigInt(Math.max(Number(MIN_VALIDITY_SECONDS), 3 * context.settings.replaceAfterSeconds));
  const until = ledger.closeTime + validity;
  return send.notAfter !== null && send.notAfter - 1n < until ? send.notAfter - 1n : until;
}

/** Ends a send before it took (or after it gave back) a sequence number, with its metric and log line. */
async function endUnsent(
  context: Context,
  send: KeeperSendRow,
  outcome: { status: 'failed' | 'expired'; result: 'refused' | 'failed' | 'expired'; error: string },
): Promise<void> {
  await withKeeperFence(context.knex, context.fence, async (trx) => {
    if (send.nonce !== null) await giveNonceBack(trx, context.fence, send.id, send.nonce);
    await finishKeeperSend(trx, send.id, { status: outcome.status, error: outcome.error });
  });
  context.metrics?.send(context.fence.chainId, send.action, outcome.result);
  context.logger?.warn({ sendId: send.id, tradeId: send.tradeId, action: send.action, side: send.side, error: outcome.error }, `keeper send ${outcome.status}`);
}

/**
 * The simulation of `send`'s call from the keeper's account, or undefined when the send was ended
 * instead: call data the sender cannot send, or a call that would fail (neither takes a sequence number).
 */
async function simulate(context: Context, send: KeeperSendRow, sequence: bigint, ledger: StellarLedger) {
  let operation;
  try {
    operation = stellarCallOf({ to: send.to, data: send.data });
  } catch (error) {
    if (!(error instanceof StellarCallDataError)) throw error;
    await endUnsent(context, send, { status: 'failed', result: 'refused', error: error.message });
    return undefined;
  }
  const draft = buildDraftTransaction({
    account: context.fence.account, sequence, operation, maxTime: maxTimeOf(context, send, ledger), networkPassphrase: context.chain.networkPassphrase,
  });
  let simulation: sorobanRpc.Api.SimulateTransactionResponse;
  try {
    simulation = await context.rpc.simulate(draft);
  } catch (error) {
    // The node refused the transaction itself as malformed or invalid; an internal error (-32603) may pass.
    if (!(error instanceof JsonRpcAnswerError) || error.rpcCode === -32603) throw error;
    await endUnsent(context, send, { status: 'failed', result: 'refused', error: `would fail: ${error.message}` });
    return undefined;
  }
  if (sorobanRpc.Api.isSimulationError(simulation)) {
    await endUnsent(context, send, { status: 'failed', result: 'refused', error: `would fail: ${simulation.error}` });
    return undefined;
  }
  if (sorobanRpc.Api.isSimulationRestore(simulation)) {
    await endUnsent(context, send, { status: 'failed', result: 'refused', error: 'would fail: an entry it reads is archived and must be restored first' });
    return undefined;
  }
  const sourceOnly = xdr.SorobanCredentialsType.sorobanCredentialsSourceAccount();
  const others = (simulation.result?.auth ?? []).filter((entry) => entry.credentials().switch() !== sourceOnly);
  if (others.length > 0) {
    // Only the transaction's source (the keeper) authorises by its signature; another address's authorisation
    // would make the call fail on chain, after taking a sequence number and a fee.
    const who = others.map((entry) => Address.fromScAddress(entry.credentials().address().address()).toString()).join(', ');
    await endUnsent(context, send, { status: 'failed', result: 'refused', error: `would fail: it needs the authorisation of ${who}` });
    return undefined;
  }
  const resourceFee = BigInt(simulation.minResourceFee);
  const inclusionFee = initialInclusionFee(await context.rpc.inclusionFee(), resourceFee, capOf(context));
  if (inclusionFee === undefined) {
    const error = `its resource fee (${resourceFee} stroops) leaves no room under KEEPER_STELLAR_MAX_FEE_STROOPS (${context.settings.maxFeeStroops})`;
    await endUnsent(context, send, { status: 'failed', result: 'refused', error });
    return undefined;
  }
  return { operation, simulation: simulation as sorobanRpc.Api.SimulateTransactionSuccessResponse, inclusionFee };
}

/**
 * A queued send: the chain's time checked against its `not_after` (passed: `expired`, nothing sent),
 * simulated (a call that would fail is `failed` and takes no sequence number), then in one fenced
 * transaction its sequence number (the database's next, moved forward when the account's is ahead),
 * signature and record, and only then the broadcast. True when a transaction is now in flight.
 */
async function sendFirst(context: Context, send: KeeperSendRow, ledger: StellarLedger): Promise<boolean> {
  const { rpc, fence } = context;
  if (send.notAfter !== null && ledger.closeTime >= send.notAfter) {
    const error = `not sent: the chain's time ${ledger.closeTime} is at or past not_after ${send.notAfter}`;
    await endUnsent(context, send, { status: 'expired', result: 'expired', error });
    return false;
  }
  const onChain = await rpc.account(fence.account);
  if (!onChain) throw new KeeperAccountMissingError(`the keeper's Stellar account ${fence.account} disappeared`);
  const prepared = await simulate(context, send, onChain.sequence + 1n, ledger);
  if (!prepared) return false;
  const signed = await withKeeperFence(context.knex, fence, async (trx, next) => {
    // The database hands out sequence numbers; the account's only moves it forward (a number used elsewhere).
    let sequence = next === null || next <= onChain.sequence ? onChain.sequence + 1n : next;
    if (sequence > onChain.sequence + 1n) {
      // Nothing of the account is in flight, so no send holds the numbers between: a gap no transaction
      // would fill (the next must follow the account's last). Take the account's next instead.
      const gap = { chainId: fence.chainId, next: String(sequence), account: String(onChain.sequence) };
      context.logger?.warn(gap, 'keeper Stellar sequence ahead of the account with nothing in flight; closing the gap');
      sequence = onChain.sequence + 1n;
    }
    const tx = buildInnerTransaction({
      account: fence.account, sequence, operation: prepared.operation, inclusionFee: prepared.inclusionFee,
      maxTime: maxTimeOf(context, send, ledger), networkPassphrase: context.chain.networkPassphrase, simulation: prepared.simulation,
    });
    const signedTx = await signStellarTransaction(context.signer, tx);
    await recordFirstAttempt(trx, fence, { id: send.id, nonce: sequence, gasLimit: null }, attemptOf(signedTx, BigInt(tx.fee), prepared.inclusionFee));
    return signedTx;
  });
  const recorded = { sendId: send.id, tradeId: send.tradeId, action: send.action, txHash: signed.txHash };
  context.logger?.info(recorded, 'keeper Stellar transaction signed and recorded');
  if (send.queuedAt) context.metrics?.sendDelay(fence.chainId, send.action, ((context.now?.() ?? Date.now()) - send.queuedAt.getTime()) / 1000);
  await broadcast(context, send.id, signed);
  return true;
}

/** The outbox's attempt columns for a Stellar envelope: the whole fee, and the inclusion fee per operation. */
const attemptOf = (signed: SignedStellarTransaction, totalFee: bigint, inclusionFee: bigint) => ({
  ...signed, maxFeePerGas: totalFee, maxPriorityFeePerGas: inclusionFee,
});

/**
 * A sent send. Found in a closed ledger at the chain's depth: `confirmed` (or `reverted`: it failed
 * in its ledger). Not found while the account shows its sequence number used: `failed` (used by a
 * transaction the keeper did not record). Past its time bounds, never landed: `expired` when the
 * send's `not_after` passed, else rebuilt with a new sequence number. Stuck past
 * KEEPER_REPLACE_AFTER_SECONDS: a fee bump around the same inner transaction. Otherwise broadcast
 * again (the same bytes: the node answers DUPLICATE when it has them). True while still in flight.
 */
async function followSent(
  context: Context,
  send: KeeperSendRow,
  attempts: KeeperAttemptRow[],
  state: StellarAccountState,
  ledger: StellarLedger,
): Promise<boolean> {
  const { rpc, fence, knex } = context;
  for (const attempt of [...attempts].reverse()) {
    const found = await rpc.transaction(attempt.txHash);
    if (!found) continue;
    const head = Math.max(found.latestLedger, ledger.sequence);
    if (head - found.ledger + 1 >= context.chain.confirmations) {
      const status = found.success ? 'confirmed' : 'reverted';
      await withKeeperFence(knex, fence, (trx) => finishKeeperSend(trx, send.id, { status, txHash: attempt.txHash, blockNumber: BigInt(found.ledger) }));
      context.metrics?.send(fence.chainId, send.action, status);
      const final = { sendId: send.id, tradeId: send.tradeId, action: send.action, txHash: attempt.txHash, ledger: found.ledger, status };
      context.logger?.info(final, 'keeper Stellar transaction final');
      return false;
    }
    if (send.txHash !== attempt.txHash || send.blockNumber !== BigInt(found.ledger)) {
      const seen = { txHash: attempt.txHash, blockNumber: BigInt(found.ledger), blockHash: null };
      await withKeeperFence(knex, fence, (trx) => recordInclusion(trx, send.id, seen));
    }
    return true;
  }
  const sequence = send.nonce!;
  if (state.sequence >= sequence) {
    // Read before the lookups above: had one of the keeper's transactions used the number, they would have found it.
    const error = `sequence number ${sequence} was used by a transaction the keeper did not record (or one older than the RPC's retention)`;
    await withKeeperFence(knex, fence, (trx) => finishKeeperSend(trx, send.id, { status: 'failed', error }));
    context.metrics?.send(fence.chainId, send.action, 'failed');
    context.logger?.error({ sendId: send.id, tradeId: send.tradeId }, `keeper send failed: ${error}`);
    return false;
  }
  const passphrase = context.chain.networkPassphrase;
  // The latest transaction built (first or rebuilt) and the fee bumps around it since: the ones that can still land.
  const parsed = attempts.map((attempt) => ({ attempt, ...parseEnvelope(attempt.raw, passphrase) }));
  let latest = parsed.length - 1;
  while (latest > 0 && parsed[latest]!.tx !== parsed[latest]!.inner) latest -= 1;
  const current = parsed.slice(latest).map(({ attempt }) => attempt);
  const innerAttempt = current[0]!;
  const inner = parsed[latest]!.inner;
  const maxTime = BigInt(inner.timeBounds?.maxTime ?? '0');
  if (maxTime !== 0n && ledger.closeTime > maxTime) {
    // No ledger from now on accepts it, and the account shows its number unused: it never landed.
    if (send.notAfter !== null && ledger.closeTime >= send.notAfter) {
      const error = `its transactions expired unsent and the chain's time ${ledger.closeTime} is past not_after ${send.notAfter}`;
      await endUnsent(context, send, { status: 'expired', result: 'expired', error });
      return false;
    }
    return rebuild(context, send, ledger);
  }
  const last = current.at(-1)!;
  const now = context.now?.() ?? Date.now();
  if (now - last.createdAt.getTime() >= context.settings.replaceAfterSeconds * 1_000) {
    const resourceFee = resourceFeeOf(inner);
    const inclusionFee = feeBumpInclusionFee(last.maxPriorityFeePerGas, await rpc.inclusionFee(), resourceFee, capOf(context));
    if (inclusionFee !== undefined) {
      const signed = await withKeeperFence(knex, fence, async (trx) => {
        const bump = buildFeeBump(fence.account, inclusionFee, inner, passphrase);
        const signedBump = await signStellarTransaction(context.signer, bump);
        await insertAttempt(trx, send.id, attemptOf(signedBump, feeBumpTotal(inclusionFee, resourceFee), inclusionFee));
        return signedBump;
      });
      context.metrics?.send(fence.chainId, send.action, 'replaced');
      const bumped = { sendId: send.id, inner: innerAttempt.txHash, txHash: signed.txHash, inclusionFee: String(inclusionFee) };
      context.logger?.info(bumped, 'keeper Stellar transaction fee-bumped');
      await broadcast(context, send.id, signed, innerAttempt);
      return true;
    }
    if (!context.cappedReported.has(send.id)) {
      context.cappedReported.add(send.id);
      context.metrics?.send(fence.chainId, send.action, 'capped');
      context.logger?.error({ sendId: send.id, txHash: last.txHash }, 'keeper Stellar transaction stuck at KEEPER_STELLAR_MAX_FEE_STROOPS: no higher fee bump');
    }
  }
  await broadcast(context, send.id, last, last === innerAttempt ? undefined : innerAttempt);
  return true;
}

/**
 * A sent send whose transactions expired unsent: simulated again (now failing: `failed`, its number
 * given back) and rebuilt on the account's next sequence number, recorded, then broadcast.
 */
async function rebuild(context: Context, send: KeeperSendRow, ledger: StellarLedger): Promise<boolean> {
  const { fence } = context;
  const onChain = await context.rpc.account(fence.account);
  if (!onChain) throw new KeeperAccountMissingError(`the keeper's Stellar account ${fence.account} disappeared`);
  const prepared = await simulate(context, send, onChain.sequence + 1n, ledger);
  if (!prepared) return false;
  const sequence = onChain.sequence + 1n;
  const signed = await withKeeperFence(context.knex, fence, async (trx) => {
    const tx = buildInnerTransaction({
      account: fence.account, sequence, operation: prepared.operation, inclusionFee: prepared.inclusionFee,
      maxTime: maxTimeOf(context, send, ledger), networkPassphrase: context.chain.networkPassphrase, simulation: prepared.simulation,
    });
    const signedTx = await signStellarTransaction(context.signer, tx);
    await recordRebuiltAttempt(trx, fence, { id: send.id, nonce: sequence }, attemptOf(signedTx, BigInt(tx.fee), prepared.inclusionFee));
    return signedTx;
  });
  const rebuilt = { sendId: send.id, old: String(send.nonce), sequence: String(sequence), txHash: signed.txHash };
  context.logger?.warn(rebuilt, 'keeper Stellar transaction expired unsent; rebuilt');
  await broadcast(context, send.id, signed);
  return true;
}

/**
 * Hands a recorded envelope to the providers; what they answer only informs the next pass's lookups.
 * A fee bump the node refuses (its fee, or a node that takes no fee bumps) is followed by `fallback`,
 * its inner transaction, which keeps its place: both carry the one sequence number, so one lands at most.
 */
async function broadcast(context: Context, sendId: string, signed: { raw: string; txHash: string }, fallback?: { raw: string; txHash: string }): Promise<void> {
  const tx = parseEnvelope(signed.raw, context.chain.networkPassphrase).tx;
  let answer: StellarSendAnswer;
  try {
    answer = await context.rpc.send(tx);
  } catch (error) {
    if (!(error instanceof JsonRpcAnswerError)) {
      await noteKeeperError(context.knex, sendId, (error as Error).message);
      throw error;
    }
    // The node refused the request itself (a malformed or unsupported envelope, to its eyes): as a refusal.
    answer = { status: 'ERROR', errorCode: error.message };
  }
  if (answer.status === 'PENDING' || answer.status === 'DUPLICATE') {
    await markBroadcast(context.knex, signed.txHash);
    return;
  }
  await noteKeeperError(context.knex, sendId, `sendTransaction ${signed.txHash}: ${answer.status}${answer.errorCode ? ` ${answer.errorCode}` : ''}`);
  if (fallback) await broadcast(context, sendId, fallback);
}
