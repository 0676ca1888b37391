import type { DepositFunding } from '../../chains/order-chain.ts';
import type { OpenReservations } from '../../db/repositories/reservations.ts';
import { TooManyReservationsError, TradeInputError } from '../errors.ts';

/** A Bridger's request for a reservation, as its own funding is judged. */
export interface OwnFundingRequest {
  bridger: string;
  /** The deposit, in the order token's base units, and as the client wrote it. */
  amount: bigint;
  amountText: string;
  /** The order token as messages name it: symbol, address, chain. */
  token: string;
  orderPortal: string;
  maxOpenPerWallet: number;
}

/**
 * Throws unless the Bridger itself can take this reservation: for an ERC-20 its allowance to the
 * OrderPortal covers the deposit (422 naming `amount`), it holds fewer than MAX_OPEN_RESERVATIONS_PER_WALLET
 * unfunded reservations (409), and its balance covers this deposit plus its other open reservations
 * of the token (422 naming `amount`). `funding` null (the chain has no RPC URL) checks the count only.
 * Looks at nothing but the caller's own chain reading and reservations: trade create runs it before
 * anyone else's reservations are read from the chain, and again under the locks that reserve.
 */
export function assertOwnFunding(
  funding: DepositFunding | null,
  open: Pick<OpenReservations, 'walletCount' | 'walletAmountOfToken'>,
  request: OwnFundingRequest,
): void {
  const { bridger, amount, amountText, token } = request;
  if (funding?.allowance != null && funding.allowance < amount) {
    throw new TradeInputError(
      'amount',
      `${amountText} exceeds what ${bridger} allows the OrderPortal ${request.orderPortal} to take of ${token} ` +
        `(${funding.allowance}): approve it first`,
    );
  }
  if (open.walletCount >= request.maxOpenPerWallet) {
    throw new TooManyReservationsError(`${bridger} already has ${open.walletCount} trades awaiting their deposit ` +
      `(at most ${request.maxOpenPerWallet}): deposit or let one run out first`);
  }
  if (funding && funding.balance < open.walletAmountOfToken + amount) {
    throw new TradeInputError(
      'amount',
      `${amountText} is more than ${bridger} holds of ${token} ` +
        `(${funding.balance}${open.walletAmountOfToken > 0n ? `, of which ${open.walletAmountOfToken} is reserved by its other open trades` : ''})`,
    );
  }
}
