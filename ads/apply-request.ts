import type { Knex } from 'knex';
import { ChainEventTakenError, recordChainEvent } from '../db/repositories/chain-events.ts';
import { lockAdRequest, lockAdRequests, markAdRequestConfirmed, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { AdChange } from '../db/repositories/ads.ts';
import { appendPushedEvents } from '../db/repositories/pushed-events.ts';
import type { AnsweredRequest } from './confirm.ts';
import { AdStateError, TransactionMismatchError } from './errors.ts';
import { applyOperation, type LedgerOperation } from './ledger.ts';
import { withAdLocked } from './port.ts';
import { moveRequests } from './request-moves.ts';
import { statusesMovedBy, stepRequest } from './request-machine.ts';

/**
 * Applies verified events to the requests of one ad they answer, in log order, inside `trx` and
 * under the ad row lock (ads/port.ts): each request stepped through the request machine on its
 * CONFIRMED fact (one already confirmed is skipped), its event recorded under (chain, tx, log
 * index), the ad's balances changed by the machine's ledger operation, and an `ad.confirmed` event
 * pushed per request. A request whose hold was already given back (EXPIRED) is still applied: the
 * chain is the truth; when the ad can no longer cover what the chain paid out, `AdStateError` (the
 * audit reports the drift). Returns how many requests changed.
 */
export async function applyAnsweredRequests(trx: Knex.Transaction, adId: string, txHash: string, answered: AnsweredRequest[]): Promise<number> {
  const confirmed: AdRequestRecord[] = [];
  const after = await withAdLocked(trx, adId, async ({ ad, balances: before }) => {
    const operations: LedgerOperation[] = [];
    let balances = before;
    let set: AdChange['set'] = {};
    let baseStatus = ad.baseStatus;
    for (const { request, event } of [...answered].sort((a, b) => a.event.logIndex - b.event.logIndex)) {
      const locked = (await lockAdRequest(trx, request.id))!;
      const amount = BigInt(event.args.amount ?? '0');
      const facts = { action: locked.action, status: locked.status, held: BigInt(locked.heldAmount) };
      const step = stepRequest(facts, { type: 'CONFIRMED', amount }, { baseStatus, balances });
      if (step.kind === 'ignored') continue; // a concurrent confirm of the same transaction won the race
      await recordEvent(trx, locked, event);
      if (step.kind === 'refused') {
        const problem = `paid out ${amount} on chain in ${txHash} but only ${step.free} is free in the books`;
        throw new AdStateError(`ad ${adId} ${problem}: the audit reports it to the operators`);
      }
      // The contract refuses every other request after a close: the machine ends them.
      if (step.voidOthers) await voidOtherRequests(trx, adId, locked.id);
      if (step.operation) {
        balances = applyOperation(balances, step.operation);
        operations.push(step.operation);
      }
      if (step.setAd) set = { ...set, baseStatus: baseStatus = step.setAd };
      await markAdRequestConfirmed(trx, locked.id, txHash);
      confirmed.push(locked);
    }
    return { operations, set };
  });
  if (!after) return 0;
  for (const request of confirmed) {
    await appendPushedEvents(trx, {
      adId, recipients: [after.creatorAddress],
      events: [{ type: 'ad.confirmed', data: {
        adId, action: request.action, txHash, status: after.status, poolAmount: after.poolAmount, availableAmount: after.availableAmount,
      } }],
    });
  }
  return confirmed.length;
}

/** The request's verified event, recorded once under (chain, tx, log index): taken by another subject is a mismatch (422). */
async function recordEvent(trx: Knex.Transaction, request: AdRequestRecord, event: AnsweredRequest['event']): Promise<void> {
  try {
    await recordChainEvent(trx, { ...event, subjectKind: 'ad_request', subjectId: request.id });
  } catch (error) {
    if (error instanceof ChainEventTakenError) throw new TransactionMismatchError(error.message);
    throw error;
  }
}

/** Every other open request of the ad, VOIDED through the machine (their holds went with the close's payout: no operation). */
async function voidOtherRequests(trx: Knex.Transaction, adId: string, keepId: string): Promise<void> {
  const others = await lockAdRequests(trx, adId, { statuses: statusesMovedBy({ type: 'VOIDED' }), exceptId: keepId });
  await moveRequests(trx, others, () => ({ type: 'VOIDED' }));
}
