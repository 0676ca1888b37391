import type { Knex } from 'knex';
import { findTradeWithDepositAge } from '../../db/repositories/trade-lifecycle.ts';
import type { DepositProver } from '../../prover/prove-deposit.ts';
import { TradeNotFoundError, TradeStateError } from '../lifecycle/errors.ts';
import type { Clock } from '../clock.ts';
import { chainFact, followUpsAfter, resume, stateOf } from '../lifecycle/index.ts';
import type { AppliedEvent, FollowUpsWithin } from '../orchestrator.ts';
import { applyEvent, deadlinesOf } from './apply-event.ts';

/**
 * The machine's PROVE: the trade's deposit proved by prover/ (`proveDeposit`), then the proof and
 * PROOF_READY stored in one transaction. A proof already stored (a retried or duplicated job, or a
 * result lost on its way back) answers as a duplicate with what the trade's state still needs.
 * A proof applied carries the deposit-to-proof seconds (the deposit's age read with the trade, plus
 * `now`'s time since). Throws `TradeNotFoundError`, `TradeStateError` (no confirmed deposit), and the
 * prover's errors.
 */
export async function proveStep(
  knex: Knex, prover: DepositProver, tradeId: string, now: Clock, carriedOut?: boolean, within?: FollowUpsWithin,
): Promise<AppliedEvent> {
  const found = await findTradeWithDepositAge(knex, tradeId, chainFact('deposit').event);
  const readAt = now();
  if (!found) throw new TradeNotFoundError(tradeId);
  const { depositAgeSeconds, ...trade } = found;
  if (trade.proof) {
    const state = stateOf(trade);
    return { state, followUps: followUpsAfter(state, resume(state), deadlinesOf(trade)), duplicate: true };
  }
  if (trade.leafIndex === null || trade.leaf === null) throw new TradeStateError(`trade ${tradeId} has no confirmed deposit to prove`);
  const tree = { chainId: trade.orderChainId, portalAddress: trade.orderParams.orderPortal };
  const proved = await prover.proveDeposit(tree, { index: trade.leafIndex, leaf: BigInt(trade.leaf) }, BigInt(trade.secret), trade.orderHash);
  // The proof and PROOF_READY in one transaction on the one row (read as above: proving took no lock).
  const stored = { proof: proved.proof, publicSignals: proved.publicSignals, targetRoot: proved.root, nullifierHash: proved.nullifier };
  const applied = await applyEvent(knex, tradeId, { type: 'PROOF_READY' }, { read: trade, proof: stored, carriedOut, within });
  if (depositAgeSeconds === null || applied.duplicate || applied.stale) return applied;
  return { ...applied, depositToProofSeconds: depositAgeSeconds + (now() - readAt) / 1000 };
}
