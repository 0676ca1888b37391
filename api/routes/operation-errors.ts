import { ERROR_CODES, type ErrorCode } from '../error-codes.ts';

/**
 * Which error codes each operation can answer: the one table the OpenAPI document's per-response
 * `x-error-codes` lists are made from (openapi/document.ts), kept beside the routes that raise them.
 * A code a whole kind of operation answers is added by what the operation is (`sharedErrorCodes`):
 * every operation (400, 429, 500), one that reads a body, one that reads a dependency, one behind a
 * Bearer token, one taking an Idempotency-Key, one with parameters or a body to validate. The table names the rest.
 * api/routes/operation-errors.test.ts sends each operation the wrong requests it can get and holds
 * every code it answers to be listed here.
 */

/** A reported transaction checked on its chain (the confirm operations). */
const CHAIN_CHECKS: ErrorCode[] = [
  'TX_NOT_FOUND', 'TX_FAILED', 'WRONG_CONTRACT', 'WRONG_EVENT', 'NOT_FINAL', 'RPC_UNAVAILABLE', 'CHAIN_FACTS_DISAGREE', 'CHAIN_UNAVAILABLE',
  'HORIZON_UNAVAILABLE',
];
/** A signed request issued: the operator may have stopped signing. */
const SIGNS: ErrorCode[] = ['SIGNING_STOPPED'];
/** The Maker's own ad, named in the path. */
const OWN_AD: ErrorCode[] = ['AD_NOT_FOUND', 'NOT_AD_CREATOR', 'AD_STATE'];
/** A party's own trade, named in the path. */
const OWN_TRADE: ErrorCode[] = ['TRADE_NOT_FOUND', 'NOT_TRADE_PARTY'];

export const OPERATION_ERRORS: Record<string, readonly ErrorCode[]> = {
  // Ads.
  listAds: ['INVALID_CURSOR', 'UNAUTHENTICATED'], // a token is optional; the caller's own pending ads need a valid one
  getAd: ['AD_NOT_FOUND'],
  createAd: ['AD_INPUT', 'NOT_AD_CREATOR', 'AD_REQUEST_LIMIT', 'RECIPIENT_CANNOT_RECEIVE', 'CHAIN_UNAVAILABLE', 'HORIZON_UNAVAILABLE', ...SIGNS],
  fundAd: [...OWN_AD, 'AD_INPUT', 'AD_REQUEST_LIMIT', 'CHAIN_UNAVAILABLE', ...SIGNS],
  withdrawFromAd: [...OWN_AD, 'AD_INPUT', 'AD_REQUEST_LIMIT', 'INSUFFICIENT_LIQUIDITY', 'CHAIN_UNAVAILABLE', ...SIGNS],
  closeAd: [...OWN_AD, 'AD_INPUT', 'AD_REQUEST_LIMIT', 'CHAIN_UNAVAILABLE', ...SIGNS],
  confirmAdTransaction: [...OWN_AD, 'TX_MISMATCH', ...CHAIN_CHECKS],
  updateAd: [...OWN_AD, 'AD_INPUT'],
  // Sign-in.
  createChallenge: ['SIGN_IN_INPUT'],
  login: ['SIGN_IN_REJECTED', 'SIGN_IN_INPUT'],
  refreshTokens: ['SIGN_IN_REJECTED', 'UNAUTHENTICATED', 'TOKEN_EXPIRED'],
  linkWallet: ['SIGN_IN_REJECTED', 'SIGN_IN_INPUT', 'WALLET_CONFLICT'],
  logout: [],
  getCurrentUser: [],
  getSep10Challenge: ['SIGN_IN_INPUT'],
  getSep10Token: ['SIGN_IN_REJECTED', 'SIGN_IN_INPUT', 'HORIZON_UNAVAILABLE'],
  // Registry reads.
  listChains: [],
  getChain: ['CHAIN_NOT_FOUND'],
  listRoutes: ['INVALID_CURSOR'],
  getRoute: ['TOKEN_ROUTE_NOT_FOUND'],
  // Events.
  streamTradeEvents: ['TRADE_NOT_FOUND', 'LAST_EVENT_ID_UNKNOWN', 'STREAM_LIMIT'],
  createEventTicket: [],
  streamEvents: ['EVENT_TICKET_REJECTED', 'LAST_EVENT_ID_UNKNOWN', 'STREAM_LIMIT'],
  // Trades.
  getQuote: ['TOKEN_ROUTE_NOT_FOUND'],
  listTrades: ['INVALID_CURSOR', 'UNAUTHENTICATED', 'RPC_UNAVAILABLE', 'CHAIN_UNAVAILABLE', 'HORIZON_UNAVAILABLE'],
  getTrade: ['TRADE_NOT_FOUND'],
  createTrade: [
    'AD_NOT_FOUND', 'NOT_TRADE_PARTY', 'TRADE_INPUT', 'AMOUNT_BELOW_MINIMUM', 'AMOUNT_ABOVE_MAXIMUM', 'AMOUNT_NOT_CONVERTIBLE',
    'RECIPIENT_CANNOT_RECEIVE', 'ROUTE_NOT_PRICED', 'AD_STATE', 'INSUFFICIENT_LIQUIDITY', 'TOO_MANY_RESERVATIONS', 'TRADE_NOT_READY',
    'CHAIN_UNAVAILABLE', 'HORIZON_UNAVAILABLE', 'ORCHESTRATOR_UNAVAILABLE', ...SIGNS,
  ],
  getTradeParams: [...OWN_TRADE],
  getTradeDepositRequest: [...OWN_TRADE, 'TRADE_ALREADY_DEPOSITED', 'DEPOSIT_REQUEST_EXPIRED'],
  confirmTradeTransaction: [...OWN_TRADE, 'TRADE_TX_MISMATCH', 'TRADE_STATE', 'TRADE_NOT_READY', 'ORCHESTRATOR_UNAVAILABLE', ...CHAIN_CHECKS],
  lockTrade: [...OWN_TRADE, 'TRADE_NOT_READY', 'TRADE_STATE', 'TREE_OUT_OF_SYNC', 'ORCHESTRATOR_UNAVAILABLE', ...SIGNS],
  unlockTrade: [...OWN_TRADE, 'TRADE_INPUT', 'TRADE_NOT_READY', 'TRADE_AWAITING', 'TREE_OUT_OF_SYNC', 'ORCHESTRATOR_UNAVAILABLE', ...SIGNS],
  confirmUnlock: [...OWN_TRADE, 'TRADE_TX_MISMATCH', 'TRADE_STATE', 'TRADE_NOT_READY', 'ORCHESTRATOR_UNAVAILABLE', ...CHAIN_CHECKS],
  // Webhooks.
  createWebhook: ['WEBHOOK_INPUT', 'WEBHOOK_LIMIT'],
  listWebhooks: [],
  getWebhook: ['WEBHOOK_NOT_FOUND'],
  deleteWebhook: ['WEBHOOK_NOT_FOUND'],
  rotateWebhookSecret: ['WEBHOOK_NOT_FOUND'],
  enableWebhook: ['WEBHOOK_NOT_FOUND'],
  listWebhookDeliveries: ['WEBHOOK_NOT_FOUND', 'INVALID_CURSOR'],
  // System.
  getStellarToml: [],
  getHealth: [],
  getHome: [],
  getDocs: [],
  getOpenApiDocument: [],
  getOpenApi30Document: [],
  getMetrics: ['NOT_FOUND'],
};

/** What an operation is, for the codes every operation of its kind answers. */
export interface OperationKind {
  /** A method whose body is read (POST, PUT, PATCH, DELETE). */
  readsBody: boolean;
  readsDependency: boolean;
  /** A Bearer token is required (not merely accepted). */
  bearer: boolean;
  idempotent: boolean;
  /** Path or query parameters, or a request body, validated. */
  validated: boolean;
}

/** The codes an operation answers by its kind alone (see OPERATION_ERRORS). */
export function sharedErrorCodes(kind: OperationKind): ErrorCode[] {
  return [
    'BAD_REQUEST', 'RATE_LIMITED', 'INTERNAL',
    ...(kind.readsBody ? ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const : []),
    ...(kind.validated ? ['VALIDATION_FAILED'] as const : []),
    ...(kind.readsDependency ? ['SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE'] as const : []),
    ...(kind.bearer ? ['UNAUTHENTICATED', 'TOKEN_EXPIRED'] as const : []),
    ...(kind.idempotent ? ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEYS_EXHAUSTED'] as const : []),
  ];
}

/**
 * Every code `operationId` can answer, in the registry's order, grouped by HTTP status. Throws for
 * an operation the table does not name, so a new endpoint cannot ship without its row.
 */
export function operationErrorCodes(operationId: string, kind: OperationKind): Map<number, ErrorCode[]> {
  const own = OPERATION_ERRORS[operationId];
  if (!own) throw new Error(`api/routes/operation-errors.ts names no error codes for operation ${operationId}: add its row`);
  const codes = new Set<ErrorCode>([...sharedErrorCodes(kind), ...own]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
    if (!codes.has(code)) continue;
    const { status } = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return byStatus;
}
