import { chainFact, type PortalOrderState } from './chain-facts.ts';
import type { TradeState } from './machine.ts';

/**
 * What the order chain says when a trade's reservation timer fires (read by the timer's activity
 * from the OrderPortal, trades/applier/chain-readings.ts): `readable: false` when this service cannot
 * ask it (a chain kind without the view, or no RPC URL); a chain that can be asked but does not
 * answer is not a reading: the activity throws and the timer is retried.
 */
export type DepositReading = { readable: false } | { readable: true; orderState: PortalOrderState };

/** Whether a fired reservation timer asks the order chain at all: only a PENDING trade still holds its reservation. */
export function reservationExpiryAsksChain(state: TradeState): boolean {
  return state.status === 'PENDING';
}

/**
 * The reservation-expiry veto: a deposit the OrderPortal shows (chain-facts.ts: Deposited, or later
 * Unlocked or Refunded) keeps its reservation, confirmed or not (it is a fact: its confirmation,
 * however late, must find the liquidity it was promised), so the timer is applied as stale (`keep`);
 * otherwise, or when the chain cannot be asked (then on the deposit request's deadline), the
 * machine applies RESERVATION_EXPIRED (`expire`; on a trade no longer PENDING it says stale itself).
 */
export function reservationExpiryVerdict(state: TradeState, reading: DepositReading): { do: 'expire' } | { do: 'keep' } {
  if (!reservationExpiryAsksChain(state) || !reading.readable) return { do: 'expire' };
  return chainFact('deposit').shownBy.includes(reading.orderState) ? { do: 'keep' } : { do: 'expire' };
}
