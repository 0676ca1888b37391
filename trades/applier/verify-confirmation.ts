import type { Knex } from 'knex';
import { ChainVerificationError, NotFinalError, RpcUnavailableError } from '../../chains/errors.ts';
import { canonicalTxHash } from '../../chains/tx-hash.ts';
import type { TransactionVerifier, VerifiedAction } from '../../chains/verify.ts';
import { CHAIN_KINDS } from '../../domain/index.ts';
import { findSubjectEventsInTransactions, type ChainEventRecord } from '../../db/repositories/chain-events.ts';
import type { ChainConnection, RegistryCache } from '../../db/repositories/registry-cache.ts';
import { TradeStateError, TradeTransactionMismatchError } from '../lifecycle/errors.ts';
import { awaitedAction, chainFactOf, eventOf, recordedAction, recordedActionFits, type ChainFact } from '../lifecycle/index.ts';
import type { ChainEventRef, Confirmation, OrderFacts, VerifiedConfirmation } from '../orchestrator.ts';
import type { TradeState } from '../lifecycle/index.ts';

/** What verifying a reported transaction reads: the recorded chain events, the chain registry, the chains. */
export interface VerifyDeps {
  knex: Knex;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
}

/** A registered chain this service can ask (it has an RPC URL). */
export type AskableChain = ChainConnection & { rpcUrl: string };

/** The registered chain `chainId` with its RPC URL, or `RpcUnavailableError` (retry later). */
export async function askableChain(registryCache: RegistryCache, chainId: string): Promise<AskableChain> {
  const found = await registryCache.chain(chainId);
  if (!found?.rpcUrl) throw new RpcUnavailableError(`chain ${chainId} has no RPC URL registered`);
  return found as AskableChain;
}

/**
 * The step's event for this order in `txHash`, on the step's contract (its row of the lifecycle's
 * chain facts). Events that move money must move the order's amount the row names (the contract
 * moves what the hashed order says; checked anyway).
 */
export async function verifyOn(
  verifier: TransactionVerifier, target: AskableChain, fact: ChainFact, txHash: string, order: OrderFacts,
): Promise<VerifiedAction> {
  const args: Record<string, string> = { orderHash: order.orderHash };
  if (fact.amount) args.amount = order[fact.amount];
  const contractAddress = fact.contract === 'AdManager' ? order.adManager : order.orderPortal;
  return verifier.verify(
    target,
    { txHash: normalizeTxHash(target, txHash), contractAddress, action: fact.name, args },
  );
}

/** The fields of a verified action the books record. */
export function chainEventRef(v: VerifiedAction): ChainEventRef {
  return { chainId: v.chainId, txHash: v.txHash, logIndex: v.logIndex, block: v.block, blockHash: v.blockHash, event: v.event, args: v.args };
}

/**
 * Verifies a reported transaction as the action the machine awaits in `state` through the
 * confirmation's endpoint, on that action's chain; a transaction already recorded for the trade
 * answers as its recorded action if it fits the endpoint (then the machine calls it a duplicate).
 * Reads no trade; `recorded`, when the caller read them with the trade (`txHashSpellings`), are the
 * trade's recorded events in the transaction and are not read again. Throws
 * `TradeTransactionMismatchError` (another kind of this trade's action, or not this trade's),
 * `TradeStateError` (nothing of that kind is awaited), the chains' errors.
 */
export async function verifyConfirmation(
  deps: VerifyDeps,
  { tradeId, confirmation, state, order, recorded }: {
    tradeId: string; confirmation: Confirmation; state: TradeState; order: OrderFacts; recorded?: readonly ChainEventRecord[];
  },
): Promise<VerifiedConfirmation> {
  const chains = { ad: await askableChain(deps.registryCache, order.adChainId), order: await askableChain(deps.registryCache, order.orderChainId) };

  // A transaction may carry events of several subjects (a batching contract, a smart account):
  // what matters is whether THIS trade's event in it is recorded, and whether it is of the kind
  // the endpoint takes: then it is a repeat. Another subject's event in the same transaction says
  // nothing about this trade; the chain is asked below.
  let otherKind: string | undefined;
  const sides = (['order', 'ad'] as const).map((side) => ({ side, chainId: chains[side].chainId, txHash: normalizeTxHash(chains[side], confirmation.txHash) }));
  // Both sides in one query (or read with the trade): the transaction may be on either chain.
  const recordedOnEither = recorded ?? await findSubjectEventsInTransactions(deps.knex, 'trade', tradeId, sides);
  for (const { side, chainId, txHash } of sides) {
    for (const event of recordedOnEither.filter((e) => e.chainId === chainId && e.txHash === txHash)) {
      const action = recordedAction(event.event, side);
      if (!action) continue;
      if (!recordedActionFits(action.name, confirmation.kind)) {
        otherKind ??= event.event;
        continue;
      }
      const { subjectKind: _kind, subjectId: _id, ...ref } = event;
      return { event: eventOf(action), chainEvent: { ...ref, args: {}, recorded: true } };
    }
  }
  // This trade's deposit or lock sent to /unlock/confirm, or its unlock to /confirm.
  const wrongKind = () => new TradeTransactionMismatchError(
    `${confirmation.txHash} is this trade's ${otherKind}, not ${confirmation.kind === 'unlock' ? 'an unlock' : 'a deposit or a lock'}`,
  );
  const awaited = awaitedAction(state, confirmation.kind);
  if (!awaited.ok) {
    if (otherKind) throw wrongKind();
    throw new TradeStateError(`trade ${tradeId}: ${awaited.reason}`);
  }
  const fact = chainFactOf(awaited.action);
  try {
    const verified = await verifyOn(deps.verifier, chains[fact.side], fact, confirmation.txHash, order);
    return { event: fact.machineEvent, chainEvent: chainEventRef(verified) };
  } catch (error) {
    const refusedByChain = error instanceof ChainVerificationError && !(error instanceof NotFinalError || error instanceof RpcUnavailableError);
    if (otherKind && refusedByChain) throw wrongKind();
    throw error;
  }
}

/**
 * Every spelling `txHash` is stored under on some chain kind (EVM `0x` + hex, Stellar bare hex): what
 * a caller reads the trade's recorded events with before `verifyConfirmation` picks its chain's own.
 * Empty when no kind takes it (then `verifyConfirmation` refuses it).
 */
export function txHashSpellings(txHash: string): string[] {
  const spellings = new Set<string>();
  for (const kind of CHAIN_KINDS) {
    const canonical = canonicalTxHash(kind, txHash);
    if (canonical) spellings.add(canonical);
  }
  return [...spellings];
}

/** The transaction hash as stored for the chain, or a `TradeTransactionMismatchError` naming txHash. */
function normalizeTxHash(chain: Pick<ChainConnection, 'kind'>, txHash: string): string {
  const canonical = canonicalTxHash(chain.kind, txHash);
  if (!canonical) throw new TradeTransactionMismatchError(`must be a 32-byte transaction hash, received '${txHash}'`);
  return canonical;
}
