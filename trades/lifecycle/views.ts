import type { UnlockParty } from '../../domain/index.ts';
import type { TradeState, UnlockSide } from './machine.ts';
import { UNLOCK_SIDES, unlockInTurn, type UnlockClaims } from './unlock-order.ts';

/**
 * What clients are shown of the unlock order (GET /v1/trades/:id, the pushed events), derived from
 * its one rule (unlock-order.ts `unlockInTurn`, `UNLOCK_SIDES`); nothing here decides anything.
 */

/**
 * The party whose call data targets the side in turn by default, as `unlockDue` on GET
 * /v1/trades/:id and in the pushed events says it: `MAKER` for the ad side, `BRIDGER` for the
 * order side, null when none is in turn. The other party may take it too (`unlockableBy`).
 */
export function whoseUnlockIsDue(trade: UnlockClaims): UnlockParty | null {
  const side = unlockInTurn(trade);
  return side === null ? null : UNLOCK_SIDES[side].takers[0]!;
}

/** The unlock that may be asked for now (`unlockDue` hands it out): the one in turn, once the proof is ready. */
export function askableUnlock(state: Pick<TradeState, 'proof'> & UnlockClaims): UnlockSide | null {
  return state.proof === 'ready' ? unlockInTurn(state) : null;
}

/**
 * Who may ask for the unlock in turn (`unlockDue` says yes to them), the default party first; nobody
 * when none is in turn or the proof is under way. A trade row without its proof state is taken as
 * proved: POST unlock answers 409 with Retry-After until the proof is ready.
 */
export function unlockableBy(trade: UnlockClaims & { proof?: TradeState['proof'] }): UnlockParty[] {
  const side = askableUnlock({ ...trade, proof: trade.proof ?? 'ready' });
  return side === null ? [] : [...UNLOCK_SIDES[side].takers];
}
