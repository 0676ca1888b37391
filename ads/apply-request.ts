import type { Knex } from 'knex';
import { ChainEventTakenError, recordChainEvent } from '../db/repositories/chain-events.ts';
import { lockAdRequest, markAdRequestConfirmed, voidOtherRequests, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import { changeLockedAd, type AdChange, type AdRecord } from '../db/repositories/ads.ts';
import { appendPushedEvents } from '../db/repositories/pushed-events.ts';
import type { AnsweredRequest } from './confirm.ts';
import { AdStateError, TransactionMismatchError } from './errors.ts';
import { applyOperation, available, balancesOf, type AdBalances } from './ledger.ts';

/**
 * Applies verified events to the requests of one ad they answer, in log order, inside `trx` and
 * under the ad row lock: each request once (one already confirmed is skipped), its event recorded
 * under (chain, tx, log index), the ad's balances changed through the ledger as the chain changed
 * them, and an `ad.confirmed` event pushed per request. A request whose hold was already given
 * back (EXPIRED) is still applied: the chain is the truth; when the ad can no longer cover what
 * the chain paid out, `AdStateError` (the audit reports the drift). Returns how many requests changed.
 */
export async function applyAnsweredRequests(trx: Knex.Transaction, adId: string, txHash: string, answered: AnsweredRequest[]): Promise<number> {
  const confirmed: AdRequestRecord[] = [];
  const after = await changeLockedAd(trx, adId, async (ad) => {
    let change: AdChange = {};
    let balances = balancesOf(ad);
    for (const { request, event } of [...answered].sort((a, b) => a.event.logIndex - b.event.logIndex)) {
      const locked = (await lockAdRequest(trx, request.id))!;
      if (locked.status === 'CONFIRMED') continue; // a concurrent confirm of the same transaction won the race
      try {
        await recordChainEvent(trx, { ...event, subjectKind: 'ad_request', subjectId: request.id });
      } catch (error) {
        if (error instanceof ChainEventTakenError) throw new TransactionMismatchError(error.message);
        throw error;
      }
      const next = await applyConfirmed(trx, ad, balances, locked, BigInt(event.args.amount ?? '0'), txHash);
      balances = next.balances ?? balances;
      change = { balances, set: { ...change.set, ...next.set } };
      confirmed.push(locked);
    }
    return change;
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

/**
 * The change a confirmed request makes to its ad, through the ad ledger, and the request marked
 * confirmed. The caller holds the ad and request locks.
 */
async function applyConfirmed(
  trx: Knex.Transaction, ad: AdRecord, balances: AdBalances, request: AdRequestRecord, eventAmount: bigint, txHash: string,
): Promise<AdChange> {
  let change: AdChange;
  switch (request.action) {
    case 'createAd':
      change = { balances: applyOperation(balances, { op: 'fund', amount: eventAmount }), set: { baseStatus: 'ACTIVE' } };
      break;
    case 'fundAd':
      change = { balances: applyOperation(balances, { op: 'fund', amount: eventAmount }) };
      break;
    case 'withdrawFromAd': {
      // The contract refuses a withdraw after a close, so this one ran before it: the close's
      // payout (everything not locked, held or not) already counted it as paid out. A fact the
      // chain accepted under our signature: confirmed, and the books stay as they are.
      if (ad.baseStatus === 'CLOSED') {
        change = {};
        break;
      }
      // PENDING and EXECUTED requests still hold their amount; an EXPIRED one gave it back.
      const held = request.status === 'EXPIRED' ? 0n : BigInt(request.heldAmount);
      if (eventAmount > available(balances) + held) {
        throw new AdStateError(
          `ad ${ad.id} paid out ${eventAmount} on chain in ${txHash} but only ${available(balances) + held} is free in the books: the audit reports it to the operators`,
        );
      }
      change = { balances: applyOperation(balances, { op: 'withdraw', amount: eventAmount, held }) };
      break;
    }
    case 'closeAd':
      // Every other request is void: the contract refuses them from now on.
      await voidOtherRequests(trx, request.adId, request.id);
      change = { balances: applyOperation(balances, { op: 'close' }), set: { baseStatus: 'CLOSED' } };
      break;
  }
  await markAdRequestConfirmed(trx, request.id, txHash);
  return change;
}
