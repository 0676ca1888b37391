import type { Knex } from 'knex';
import { setAdRequestStatus, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { LedgerOperation } from './ledger.ts';
import { stepRequest, type RequestEvent, type RequestStatus } from './request-machine.ts';

/**
 * Steps each of `requests` (locked by the caller, under the ad row lock) through the request
 * machine on its fact (a lapse or a void), writes the statuses it says (one UPDATE per new status)
 * and returns the ledger operations it says, for the caller to apply to the ad.
 */
export async function moveRequests(
  trx: Knex.Transaction, requests: readonly AdRequestRecord[], factOf: (request: AdRequestRecord) => Exclude<RequestEvent, { type: 'CONFIRMED' }>,
): Promise<LedgerOperation[]> {
  const moved = new Map<RequestStatus, string[]>();
  const operations: LedgerOperation[] = [];
  for (const request of requests) {
    const step = stepRequest({ action: request.action, status: request.status, held: BigInt(request.heldAmount) }, factOf(request));
    if (step.kind !== 'moved') continue;
    moved.set(step.status, [...(moved.get(step.status) ?? []), request.id]);
    if (step.operation) operations.push(step.operation);
  }
  for (const [status, ids] of moved) await setAdRequestStatus(trx, ids, status);
  return operations;
}
