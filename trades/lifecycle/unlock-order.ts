import type { UnlockParty } from '../../domain/index.ts';
import type { TradeState, UnlockSide } from './machine.ts';

/**
 * The unlock order (docs/design.md "No party is left without a way out"), written once: `unlockInTurn` is the rule,
 * `UNLOCK_SIDES` says for each side who is its default party and who may take it and until when;
 * every other answer about unlocks (`unlockDue` for POST unlock, `awaitedAction` for the confirm,
 * views.ts for GET /v1/trades/:id and the pushed events) is derived from these two.
 */

/** A caller's part in a trade, as the service tells it from the caller's wallets (the API's `UnlockParty` names them in capitals). */
export type Role = 'maker' | 'bridger';

/** What the unlock order reads of a trade: its status and which unlocks are confirmed (the API's trade rows carry these). */
export type UnlockClaims = Pick<TradeState, 'status' | 'bridgerClaimed' | 'adCreatorClaimed'>;

/** The party a role is, as the API names it. */
export const PARTY_OF: Readonly<Record<Role, UnlockParty>> = { maker: 'MAKER', bridger: 'BRIDGER' };

/**
 * Each side of the unlock: the contract's unlock pays `pays` whoever sends it, so `takers` (both
 * parties) may take it while it is in turn, its default party first (the spec's routing: the Maker's
 * unlock targets the AdManager, the Bridger's the OrderPortal); `closesAt` names the order time
 * after which the contract refuses it (the ad side before lockExpiry, when the Maker may release
 * the lock instead; the order side before refundTime, when the Bridger may refund instead).
 */
export const UNLOCK_SIDES: Readonly<Record<UnlockSide, { pays: UnlockParty; takers: readonly UnlockParty[]; closesAt: 'lockExpiry' | 'refundTime' }>> = {
  ad: { pays: 'BRIDGER', takers: ['MAKER', 'BRIDGER'], closesAt: 'lockExpiry' },
  order: { pays: 'MAKER', takers: ['BRIDGER', 'MAKER'], closesAt: 'refundTime' },
};

/**
 * THE rule: on a LOCKED trade the ad side (AdManager.unlock, pays the Bridger) is in turn until it
 * is confirmed, then the order side (OrderPortal.unlock, pays the Maker); none outside LOCKED. The
 * ad side is only valid before the lock expiry, so were the order side first, a Maker could be
 * paid, let the lock expire and take it back.
 */
export function unlockInTurn(trade: UnlockClaims): UnlockSide | null {
  if (trade.status !== 'LOCKED') return null;
  if (!trade.bridgerClaimed) return 'ad';
  return trade.adCreatorClaimed ? null : 'order';
}

/**
 * The side a party's unlock targets when it does not name one: the Bridger's the order side (the
 * spec's default), the Maker's the ad side until that is confirmed, then the order side, so the
 * Maker is never left waiting on the Bridger to submit it.
 */
function defaultSide(state: UnlockClaims, role: Role): UnlockSide {
  if (role === 'bridger') return 'order';
  return state.bridgerClaimed ? 'order' : 'ad';
}

/**
 * Which unlock a party may be given now (POST /v1/trades/:id/unlock), or why none: `asked` (its
 * `side`), else the party's default side, and only the side in turn (`unlockInTurn`) to one of its
 * `takers`, once the proof is ready. Either party may take either side: whoever sends the ad-side
 * unlock, the AdManager pays the Bridger's recipient, so an absent Maker cannot hold the Bridger's
 * deposit until refundTime (the Bridger takes the ad side, then the order side); whoever sends the
 * order side, the OrderPortal pays the Maker's. The order side is refused while the ad side is not
 * confirmed (`awaited`: 409 with Retry-After), the ad side once it is.
 */
export function unlockDue(state: TradeState, role: Role, asked?: UnlockSide): { side: UnlockSide } | { missing: string; awaited?: true } {
  if (state.status !== 'LOCKED' && state.status !== 'SETTLED') return { missing: `the trade is ${state.status}, unlock needs LOCKED` };
  if (state.proof !== 'ready') return { missing: 'the proof is not ready yet: retry shortly', awaited: true };
  const inTurn = unlockInTurn(state);
  if (inTurn === null) return { missing: 'both unlocks are confirmed: the trade is settled' };
  const side = asked ?? defaultSide(state, role);
  if (side === inTurn && UNLOCK_SIDES[side].takers.includes(PARTY_OF[role])) return { side };
  if (side === 'ad') return { missing: 'the ad-chain unlock is already confirmed (bridgerClaimed): the order-chain unlock is in turn, ask for side "order"' };
  const yours = role === 'bridger'
    ? 'ask for it yourself with {"signature", "side": "ad"} (the AdManager pays your recipient whoever sends it; ' +
      'the Maker may send it too) and confirm it, or retry once it is confirmed'
    : 'ask for it with side "ad" (or without a side) and confirm it, or retry once the Bridger has';
  return {
    missing: `unlock order: the ad-chain unlock (which pays the Bridger) comes first and must be confirmed before ` +
      `the order-chain unlock is issued; ${yours} (unlockDue and unlockableBy on GET /v1/trades/{id} say which ` +
      `unlock is in turn)`,
    awaited: true,
  };
}
