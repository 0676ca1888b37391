/**
 * The management view's five labels (the spec: "It labels statuses Active, Matched, Locked, Settled,
 * Closed. These labels differ from the API status values") and the ONE place API states map to them.
 * A label says what is happening to the money: Active - the ad takes orders now; Matched - an order
 * holds it (a trade reserved or deposited; an ad whose whole balance is matched); Locked - the Maker
 * locked it for an order, the proof and the unlocks follow; Settled - both sides paid; Closed -
 * nothing moves and no order is taken (an ad closed, paused or not yet confirmed; a trade expired).
 * The API's own status is always shown beside the label. app/README.md holds this table too
 * (app/labels.test.ts keeps both equal, and every API state mapped to exactly one label).
 */
export const LABELS = ['Active', 'Matched', 'Locked', 'Settled', 'Closed'] as const;
export type Label = (typeof LABELS)[number];

/** An ad's status as the API returns it (`Ad.status`). */
export type AdStatus = 'PENDING' | 'ACTIVE' | 'PAUSED' | 'EXHAUSTED' | 'CLOSED';
/** A trade's status as the API returns it (`Trade.status`). */
export type TradeStatus = 'PENDING' | 'DEPOSITED' | 'LOCKED' | 'SETTLED' | 'EXPIRED';

export const AD_LABELS: Readonly<Record<AdStatus, Label>> = {
  PENDING: 'Closed', // its create is not confirmed yet: it takes no order
  ACTIVE: 'Active',
  PAUSED: 'Closed', // takes no order until resumed
  EXHAUSTED: 'Matched', // its whole balance is matched to orders
  CLOSED: 'Closed',
};

export const TRADE_LABELS: Readonly<Record<TradeStatus, Label>> = {
  PENDING: 'Matched', // reserved against the ad, the deposit awaited
  DEPOSITED: 'Matched', // deposited, the Maker's lock awaited
  LOCKED: 'Locked',
  SETTLED: 'Settled',
  EXPIRED: 'Closed',
};

/** The label of an ad status; an unknown status (a newer API) reads as Closed, never as Active. */
export function adLabel(status: string): Label {
  return (AD_LABELS as Record<string, Label>)[status] ?? 'Closed';
}

/** The label of a trade status; an unknown status reads as Closed. */
export function tradeLabel(status: string): Label {
  return (TRADE_LABELS as Record<string, Label>)[status] ?? 'Closed';
}
