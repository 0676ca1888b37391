import type { Schemas } from '@cross-chain-relayer/client';

/**
 * The API's codes: the client's union, and the few the page names before the generated client's
 * union lists them (harmless once it does: a union absorbs a repeated member).
 */
export type ErrorCode = NonNullable<Schemas['Error']['code']>
  | 'CHAIN_NOT_FOUND' | 'TOKEN_ROUTE_NOT_FOUND' | 'EVENT_TICKET_REJECTED' | 'LAST_EVENT_ID_UNKNOWN' | 'STREAM_LIMIT' | 'RECIPIENT_CANNOT_RECEIVE';

/**
 * Every `code` of the API's error body as a sentence a person understands (typed against the
 * client's union: a new code does not compile until it has its sentence). The API's own `message`
 * follows it, for the detail (which field, which bound).
 */
export const ERROR_SENTENCES: Readonly<Record<ErrorCode, string>> = {
  BAD_REQUEST: 'The request could not be read.',
  INVALID_JSON: 'The request could not be read.',
  UNAUTHENTICATED: 'Please sign in again.',
  FORBIDDEN: 'You are signed in, but this is not yours to do.',
  NOT_FOUND: 'Nothing was found there.',
  ROUTE_NOT_FOUND: 'This page asked for something the service does not offer.',
  METHOD_NOT_ALLOWED: 'This page asked for something the service does not offer.',
  CONFLICT: 'This cannot be done in the current state.',
  PAYLOAD_TOO_LARGE: 'That is too much data to send.',
  UNSUPPORTED_MEDIA_TYPE: 'The request could not be read.',
  VALIDATION_FAILED: 'Some of what you entered is not valid.',
  RATE_LIMITED: 'Too many requests: wait a moment and try again.',
  INTERNAL: 'Something went wrong on the service. Try again later.',
  SERVICE_UNAVAILABLE: 'The service is briefly unavailable. Try again in a moment.',
  DATABASE_UNAVAILABLE: 'The service is briefly unavailable. Try again in a moment.',
  SIGNING_STOPPED: 'The service has paused new on-chain requests for maintenance. Trades under way continue; try again later.',
  IDEMPOTENCY_KEY_REUSED: 'This request was already sent with other content. Start it again.',
  IDEMPOTENCY_KEY_IN_USE: 'The same request is still being processed. Wait a moment.',
  IDEMPOTENCY_KEYS_EXHAUSTED: 'Too many requests of this account in the last day: try again later.',
  TOKEN_EXPIRED: 'Your session expired: please sign in again.',
  SIGN_IN_REJECTED: 'The sign-in was not accepted: the signature does not match, or the sign-in request expired. Try again.',
  SIGN_IN_INPUT: 'The sign-in message was not in the expected form.',
  WALLET_CONFLICT: 'This wallet is already linked to another account, or you already linked a wallet of this kind.',
  AD_NOT_FOUND: 'This ad does not exist.',
  NOT_AD_CREATOR: 'Only the ad\'s creator can do this, signed in with a wallet of the ad\'s chain.',
  AD_STATE: 'The ad cannot do this now: it is closed, not yet confirmed, or being closed.',
  INSUFFICIENT_LIQUIDITY: 'The ad does not have enough available balance for this amount: choose a smaller amount or another ad.',
  AD_REQUEST_LIMIT: 'You have too many ads or ad requests waiting. Finish or wait for them, then try again.',
  AD_INPUT: 'Something entered does not fit this ad or route.',
  TX_MISMATCH: 'That transaction is not the one this ad was waiting for.',
  CHAIN_UNAVAILABLE: 'The chain cannot be reached right now to check the transaction. Try again later.',
  CHAIN_FACTS_DISAGREE: 'The chain\'s nodes gave different answers about this transaction, so nothing was changed. Try again later.',
  TRADE_NOT_FOUND: 'No trade was found.',
  NOT_TRADE_PARTY: 'You are not the party of this trade this step is for.',
  TRADE_INPUT: 'Something entered does not fit this trade, ad or route.',
  AMOUNT_BELOW_MINIMUM: 'The amount is below the ad\'s minimum.',
  AMOUNT_ABOVE_MAXIMUM: 'The amount is above the ad\'s maximum.',
  AMOUNT_NOT_CONVERTIBLE: 'This amount does not convert exactly on this route: use a multiple of the route\'s step.',
  ROUTE_NOT_PRICED: 'This route has no price between its two tokens.',
  TRADE_NOT_READY: 'The trade is not ready for this step yet.',
  TRADE_AWAITING: 'The trade is waiting for something under way (the proof, or the other party\'s unlock). Try again shortly.',
  TRADE_STATE: 'The trade cannot take this step any more (for example, its reservation expired).',
  TRADE_TX_MISMATCH: 'That transaction does not belong to this trade.',
  TRADE_ALREADY_DEPOSITED: 'This trade is already deposited: follow it from here.',
  DEPOSIT_REQUEST_EXPIRED: 'The time to deposit for this trade has run out. Start a new trade.',
  TOO_MANY_RESERVATIONS: 'There are too many unfunded reservations for this wallet or ad. Deposit or wait for them to expire.',
  ORCHESTRATOR_UNAVAILABLE: 'The service cannot start this step right now; nothing was done. Try again later.',
  TREE_OUT_OF_SYNC: 'The service is catching up with the chain. Try again in a moment.',
  TX_NOT_FOUND: 'The chain does not know that transaction (yet).',
  TX_FAILED: 'The transaction failed on chain.',
  WRONG_CONTRACT: 'The transaction called another contract than expected.',
  WRONG_EVENT: 'The transaction did not do what was expected on chain.',
  NOT_FINAL: 'The transaction is not final yet.',
  RPC_UNAVAILABLE: 'The chain cannot be reached right now. Try again later.',
  HORIZON_UNAVAILABLE: 'The Stellar network cannot be reached right now. Try again later.',
  INVALID_CURSOR: 'The list could not be continued: reload the page.',
  WEBHOOK_INPUT: 'A webhook setting is not allowed.',
  WEBHOOK_NOT_FOUND: 'No such webhook.',
  WEBHOOK_LIMIT: 'You have as many webhooks as allowed.',
  CHAIN_NOT_FOUND: 'This chain is not known to the service.',
  TOKEN_ROUTE_NOT_FOUND: 'This route does not exist (any more): reload the page.',
  EVENT_TICKET_REJECTED: 'The live-update connection was refused: reload the page.',
  LAST_EVENT_ID_UNKNOWN: 'Live updates could not resume where they stopped: reload the page.',
  STREAM_LIMIT: 'Too many live-update connections are open: close other tabs of this page.',
  RECIPIENT_CANNOT_RECEIVE: 'Your receiving address cannot be paid this token on its chain (on Stellar: the account does not exist, or has no trustline for the asset). Create the account or add the trustline first.',
};

/** An error a person reads: the sentence, and the detail when there is one. */
export class UserError extends Error {
  constructor(readonly sentence: string, readonly detail?: string, readonly code?: string) {
    super(detail ? `${sentence} (${detail})` : sentence);
  }
}

/** The API's error body as a UserError. */
export function apiError(body: unknown, status?: number): UserError {
  const error = (body ?? {}) as { code?: string; message?: unknown };
  const code = error.code as ErrorCode | undefined;
  const sentence = (code && ERROR_SENTENCES[code]) ?? `The service answered ${status ?? 'an error'}.`;
  const detail = Array.isArray(error.message) ? error.message.join('; ') : typeof error.message === 'string' ? error.message : undefined;
  return new UserError(sentence, detail, code);
}

/** Any thrown thing as the sentence shown to the user: wallet refusals (EIP-1193 4001, Freighter's declined), API errors, the rest. */
export function explain(error: unknown): string {
  if (error instanceof UserError) return error.message;
  const e = error as { code?: unknown; message?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  // EIP-1193: 4001 the user rejected, 4100 not authorized, 4902 unknown chain.
  if (e?.code === 4001 || e?.code === 'ACTION_REJECTED') return 'You rejected the request in your wallet: nothing was signed or sent.';
  if (e?.code === 4100) return 'Your wallet has not allowed this page: connect it first.';
  if (e?.error?.code === -4 || /declined|rejected/i.test(String(e?.message ?? e?.error?.message ?? ''))) {
    return 'You declined the request in your wallet: nothing was signed.';
  }
  return typeof e?.message === 'string' ? e.message : String(error);
}
