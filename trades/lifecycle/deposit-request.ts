import type { TradeStatus } from '../../domain/index.ts';

/**
 * Whether a trade's kept deposit request may be handed to its Bridger again: only the one request
 * create signed, only while the trade awaits its deposit (PENDING) and before the request's deadline
 * (the contract refuses it from then on, and the reservation runs out).
 */
export type DepositRequestVerdict =
  | { give: true; secondsLeft: number }
  | { give: false; why: 'deposited' | 'expired' | 'not-kept' };

/**
 * `status`: the trade's; `deadline`: the kept request's (unix seconds), null when none was kept;
 * `nowSeconds`: the service's clock. A deposit already made (DEPOSITED and after) outranks expiry.
 */
export function depositRequestVerdict(status: TradeStatus, deadline: string | null, nowSeconds: number): DepositRequestVerdict {
  if (status === 'DEPOSITED' || status === 'LOCKED' || status === 'SETTLED') return { give: false, why: 'deposited' };
  if (status !== 'PENDING') return { give: false, why: 'expired' };
  if (deadline === null) return { give: false, why: 'not-kept' };
  const secondsLeft = Number(BigInt(deadline) - BigInt(nowSeconds));
  return secondsLeft > 0 ? { give: true, secondsLeft } : { give: false, why: 'expired' };
}
