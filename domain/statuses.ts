/**
 * Ad and trade states. `PENDING` ads exist only until their create is
 * confirmed; `EXHAUSTED` is derived from balances, never stored.
 */
export const AD_STATUSES = ['PENDING', 'ACTIVE', 'PAUSED', 'EXHAUSTED', 'CLOSED'] as const;
export type AdStatus = (typeof AD_STATUSES)[number];

/** The statuses a published (confirmed) ad can show, and that lists filter on by default. */
export const LISTED_AD_STATUSES = ['ACTIVE', 'PAUSED', 'EXHAUSTED', 'CLOSED'] as const satisfies readonly AdStatus[];

/** What a Maker may set by update (no on-chain transaction). */
export const SETTABLE_AD_STATUSES = ['ACTIVE', 'PAUSED'] as const satisfies readonly AdStatus[];

export const TRADE_STATUSES = ['PENDING', 'DEPOSITED', 'LOCKED', 'SETTLED', 'EXPIRED'] as const;
export type TradeStatus = (typeof TRADE_STATUSES)[number];

/** The trade statuses a trade can still leave: orchestrators resume them, gauges age them. */
export const OPEN_TRADE_STATUSES = ['PENDING', 'DEPOSITED', 'LOCKED'] as const satisfies readonly TradeStatus[];
export type OpenTradeStatus = (typeof OPEN_TRADE_STATUSES)[number];

/** The rest: after these nothing more can happen (the machine ends there, a trade's stream closes). */
export const TERMINAL_TRADE_STATUSES: ReadonlySet<TradeStatus> = new Set(
  TRADE_STATUSES.filter((status) => !(OPEN_TRADE_STATUSES as readonly TradeStatus[]).includes(status)),
);
