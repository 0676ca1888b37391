/**
 * Every `code` an error body can carry: its HTTP status and what it means to a client. Clients
 * branch on `code`, never on `message` (English, may change). The OpenAPI `Error.code` enum and
 * docs/api.md's table are this list (api/error-codes.test.ts holds them equal, and holds every code
 * a domain error declares to be listed here).
 */
export const ERROR_CODES = {
  // Generic, one per status: the fallback when no more specific code applies.
  BAD_REQUEST: { status: 400, meaning: 'the request is malformed (bad percent-encoding, aborted body, wrong Content-Length)' },
  INVALID_JSON: { status: 400, meaning: 'the body is not valid JSON' },
  UNAUTHENTICATED: { status: 401, meaning: 'no, bad, expired or revoked access token: sign in (or refresh) and retry' },
  FORBIDDEN: { status: 403, meaning: 'signed in, but not allowed to do this' },
  NOT_FOUND: { status: 404, meaning: 'the resource named in the path does not exist (or is not yours to see)' },
  ROUTE_NOT_FOUND: { status: 404, meaning: 'no endpoint has this path' },
  METHOD_NOT_ALLOWED: { status: 405, meaning: 'the path exists but not with this method; `Allow` lists those it takes' },
  CONFLICT: { status: 409, meaning: 'the current state forbids the action' },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: 'the body (or its parameter count) is over the limit' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: 'the body is not application/json, or its encoding/charset is not supported' },
  VALIDATION_FAILED: { status: 422, meaning: 'a field is invalid; `message` lists each problem naming its field' },
  RATE_LIMITED: { status: 429, meaning: 'over a request budget; retry after `Retry-After`' },
  INTERNAL: { status: 500, meaning: 'an unexpected failure (a bug), logged with the request id' },
  SERVICE_UNAVAILABLE: { status: 503, meaning: 'a dependency is down; retry after `Retry-After`' },
  DATABASE_UNAVAILABLE: { status: 503, meaning: 'PostgreSQL is unreachable; retry after `Retry-After`' },
  SIGNING_STOPPED: { status: 503, meaning: 'the operator has stopped signing (an incident): no signed request is issued until it is resumed; retry later' },
  // Idempotency-Key.
  IDEMPOTENCY_KEY_REUSED: { status: 422, meaning: 'this Idempotency-Key was used for another request in the last 24 h: send a new key' },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    meaning: 'the first request with this Idempotency-Key is still running (retry to get its answer), or stopped ' +
      'before its answer was stored (look for its effect; use a new key for a new request)',
  },
  IDEMPOTENCY_KEYS_EXHAUSTED: {
    status: 429,
    meaning: 'you hold as many Idempotency-Keys of the last 24 h as one user may: retry after `Retry-After`, or send ' +
      'the request without the header (a key you already hold still replays)',
  },
  // Registry reads.
  CHAIN_NOT_FOUND: { status: 404, meaning: 'no chain is registered with this chainId' },
  TOKEN_ROUTE_NOT_FOUND: { status: 404, meaning: 'no such route (GET /v1/routes/{id}, a quote\'s routeId)' },
  // Event streams.
  EVENT_TICKET_REJECTED: { status: 401, meaning: 'the stream ticket is unknown, expired or already used: ask POST /v1/events/ticket for a new one' },
  LAST_EVENT_ID_UNKNOWN: {
    status: 422,
    meaning: 'Last-Event-ID (or lastEventId) lies beyond the stream\'s last event: resume from an id you were sent, or from the start',
  },
  STREAM_LIMIT: { status: 429, meaning: 'this client already holds as many open event streams as allowed: close one (retry after `Retry-After`)' },
  // Sign-in and wallets.
  TOKEN_EXPIRED: { status: 401, meaning: 'the access token expired: refresh it (a refresh token that expired: sign in again)' },
  SIGN_IN_REJECTED: { status: 401, meaning: 'the sign-in proof does not hold: bad signature, or an unknown, used or expired challenge' },
  SIGN_IN_INPUT: { status: 422, meaning: 'the sign-in message or proof is malformed; `message` names the field' },
  WALLET_CONFLICT: { status: 409, meaning: 'a wallet of this chain kind is already linked, or the address belongs to another user' },
  // Ads.
  AD_NOT_FOUND: { status: 404, meaning: 'no such ad' },
  NOT_AD_CREATOR: { status: 403, meaning: 'only the ad creator (with a wallet of the ad chain kind) may do this' },
  AD_STATE: { status: 409, meaning: 'the ad is closed, not yet confirmed, or a close is under way' },
  INSUFFICIENT_LIQUIDITY: { status: 409, meaning: 'the ad\'s available balance cannot cover the amount: pick another ad or a smaller amount' },
  AD_REQUEST_LIMIT: { status: 429, meaning: 'too many pending ads or open ad requests; retry after `Retry-After`' },
  AD_INPUT: { status: 422, meaning: 'a field is not valid for this ad or route; `message` names it' },
  TX_MISMATCH: { status: 422, meaning: 'the reported txHash answers no confirmable request of this ad' },
  CHAIN_UNAVAILABLE: {
    status: 503,
    meaning: 'the chain cannot be read now (fewer RPC providers answer than its quorum): nothing changed, retry after `Retry-After`',
  },
  // Trades.
  TRADE_NOT_FOUND: { status: 404, meaning: 'no such trade' },
  NOT_TRADE_PARTY: { status: 403, meaning: 'you are not the party of this trade the action is for' },
  TRADE_INPUT: { status: 422, meaning: 'a field is not valid for this trade, ad or route; `message` names it' },
  AMOUNT_BELOW_MINIMUM: { status: 422, meaning: 'amount is below the ad\'s minAmount' },
  AMOUNT_ABOVE_MAXIMUM: { status: 422, meaning: 'amount is above the ad\'s maxAmount' },
  AMOUNT_NOT_CONVERTIBLE: {
    status: 422,
    meaning: 'amount does not convert exactly into the ad token on this route: use a multiple of the step the message gives',
  },
  RECIPIENT_CANNOT_RECEIVE: {
    status: 422,
    meaning: 'bridgerDstAddress (trade create) or creatorDstAddress (ad create) cannot be paid the token it would ' +
      'receive on its chain (Stellar: no such account for XLM, no usable trustline for a classic asset): create the ' +
      'account or add the trustline, or name another recipient',
  },
  ROUTE_NOT_PRICED: { status: 422, meaning: 'the route states no rate between tokens of different assets' },
  TRADE_NOT_READY: { status: 409, meaning: 'the trade\'s state does not allow the action yet (or any more); the message says what is missing' },
  TRADE_AWAITING: { status: 409, meaning: 'what the action needs (the proof, the other party\'s unlock) is under way: retry after `Retry-After`' },
  TRADE_STATE: { status: 409, meaning: 'the trade\'s state does not admit this event (e.g. a deposit after the reservation expired)' },
  TRADE_TX_MISMATCH: { status: 422, meaning: 'the reported txHash is not this trade\'s' },
  TRADE_ALREADY_DEPOSITED: { status: 409, meaning: 'the trade\'s deposit was already made: its deposit request is spent; follow the trade' },
  DEPOSIT_REQUEST_EXPIRED: {
    status: 409,
    meaning: 'the trade\'s deposit request ran out (its deadline passed): no deposit can be made for it; create a new trade',
  },
  TOO_MANY_RESERVATIONS: { status: 409, meaning: 'the wallet or the ad has as many unfunded reservations as allowed' },
  ORCHESTRATOR_UNAVAILABLE: { status: 503, meaning: 'the orchestrator cannot be reached: nothing was decided, retry later' },
  TREE_OUT_OF_SYNC: { status: 503, meaning: 'the mirrored tree disagrees with the portal, or a chain is unreachable: retry later' },
  // Reported transactions.
  TX_NOT_FOUND: { status: 422, meaning: 'the chain knows no such transaction' },
  TX_FAILED: { status: 422, meaning: 'the transaction reverted or failed' },
  WRONG_CONTRACT: { status: 422, meaning: 'the transaction called another contract than the request was signed for' },
  WRONG_EVENT: { status: 422, meaning: 'the contract did not emit the expected event with the expected arguments' },
  NOT_FINAL: { status: 409, meaning: 'the transaction is not final yet: retry after `Retry-After`' },
  RPC_UNAVAILABLE: { status: 503, meaning: 'the chain\'s RPC cannot be reached: retry later' },
  CHAIN_FACTS_DISAGREE: {
    status: 503,
    meaning: 'the chain\'s RPC providers disagree about the transaction or state: nothing changed, retry after `Retry-After`',
  },
  HORIZON_UNAVAILABLE: { status: 503, meaning: 'Stellar Horizon cannot be reached: retry later' },
  // Lists and webhooks.
  INVALID_CURSOR: { status: 422, meaning: 'the cursor was not issued by this service' },
  WEBHOOK_INPUT: { status: 422, meaning: 'a webhook registration field is not allowed; `message` names it' },
  WEBHOOK_NOT_FOUND: { status: 404, meaning: 'no such webhook endpoint of yours' },
  WEBHOOK_LIMIT: { status: 409, meaning: 'you already have as many webhook endpoints as allowed' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Every code, in registry order (the OpenAPI enum). */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

/** The generic code of a status, for errors with no specific one. */
const GENERIC_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST', 401: 'UNAUTHENTICATED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE', 415: 'UNSUPPORTED_MEDIA_TYPE', 422: 'VALIDATION_FAILED',
  429: 'RATE_LIMITED', 500: 'INTERNAL', 503: 'SERVICE_UNAVAILABLE',
};

/** True when `code` is a registered code. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}

/** The generic code for `status` (INTERNAL for a 5xx without one, BAD_REQUEST for any other 4xx). */
export function genericCode(status: number): ErrorCode {
  return GENERIC_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST');
}

/** 409 codes that say "not yet": the same request may succeed when what it waits for happens. */
const RETRYABLE_CONFLICTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_FINAL', 'TRADE_AWAITING', 'IDEMPOTENCY_KEY_IN_USE']);

/**
 * Whether the same request, sent again unchanged (under the same Idempotency-Key), may succeed
 * later: every 429 and 503 (a budget or a dependency that recovers), a 500 (an unexpected failure
 * need not repeat; the key makes the retry safe), and the 409s that mean "not yet". Everything
 * else needs a changed request or another action first (sign in again, fund the ad, pick another).
 */
export function isRetryable(code: ErrorCode): boolean {
  const { status } = ERROR_CODES[code] as { status: number };
  return status === 429 || status >= 500 || RETRYABLE_CONFLICTS.has(code);
}
