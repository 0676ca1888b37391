import type { AdStatus, TradeStatus } from './statuses.ts';

/**
 * The events the service pushes (architecture.md "Pushed status"), over server-sent events and
 * webhooks alike. Each is `{type, timestamp, data}` (the Standard Webhooks payload shape); trade
 * events carry the trade as it stands after the change, so a client can act on any one event alone.
 */
export const PUSHED_EVENT_TYPES = [
  'trade.created', 'trade.status_changed', 'trade.proof_ready', 'trade.unlock_due', 'trade.claimed', 'trade.expired', 'ad.confirmed',
] as const;
export type PushedEventType = (typeof PUSHED_EVENT_TYPES)[number];

/**
 * Whose unlock is due (architecture.md "Unlock order"), as GET /v1/trades/:id shows it: the Maker's
 * ad-chain unlock (pays the Bridger) first, then the order-chain unlock (pays the Maker), the
 * Bridger's to send though the Maker may too.
 */
export type UnlockParty = 'MAKER' | 'BRIDGER';

/** `MAKER` while a LOCKED trade's ad-chain unlock is unconfirmed, then `BRIDGER` until the order-chain one is; null outside LOCKED. */
export function whoseUnlockIsDue(trade: { status: TradeStatus; bridgerClaimed: boolean; adCreatorClaimed: boolean }): UnlockParty | null {
  if (trade.status !== 'LOCKED') return null;
  if (!trade.bridgerClaimed) return 'MAKER';
  return trade.adCreatorClaimed ? null : 'BRIDGER';
}

/** The trade after the change. */
export interface TradeSnapshot {
  tradeId: string;
  adId: string;
  status: TradeStatus;
  proofReady: boolean;
  bridgerClaimed: boolean;
  adCreatorClaimed: boolean;
  /** Whose unlock is due, as GET /v1/trades/:id says. */
  unlockDue: UnlockParty | null;
}

export type PushedEventData =
  /** `amount` = `orderAmount` (order token units, what the Bridger deposits); `adAmount` (ad token units) is what the Maker locks and the Bridger is paid. */
  | { type: 'trade.created'; data: TradeSnapshot & { routeId: string; amount: string; orderAmount: string; adAmount: string; adCreatorAddress: string; bridgerAddress: string } }
  | { type: 'trade.status_changed'; data: TradeSnapshot & { previousStatus: TradeStatus } }
  | { type: 'trade.proof_ready'; data: TradeSnapshot }
  /** The due unlock may be asked for now (LOCKED and the proof ready): `side` `ad` (AdManager, pays the Bridger) or `order` (OrderPortal, pays the Maker). */
  | { type: 'trade.unlock_due'; data: TradeSnapshot & { unlockDue: UnlockParty; side: 'ad' | 'order' } }
  /** `side`'s unlock is confirmed: `ad` paid the Bridger (bridgerClaimed), `order` paid the Maker (adCreatorClaimed). */
  | { type: 'trade.claimed'; data: TradeSnapshot & { side: 'ad' | 'order' } }
  /**
   * `reservation`: no deposit in time; `lock_window`: no lock in time (the Bridger refunds on chain);
   * `lock_released`: the Maker's lock was released on chain after lockExpiry, the ad-side unlock never made.
   */
  | { type: 'trade.expired'; data: TradeSnapshot & { reason: 'reservation' | 'lock_window' | 'lock_released' } }
  /** A Maker's ad transaction (create, fund, withdraw, close) is confirmed. */
  | { type: 'ad.confirmed'; data: { adId: string; action: string; txHash: string; status: AdStatus; poolAmount: string; availableAmount: string } };

/** A committed event as delivered: `id` is its position in the stream it is read from. */
export type PushedEvent = PushedEventData & { timestamp: string };

/**
 * The JSON of one event as every channel delivers it (a server-sent event's data, a webhook's body):
 * the Standard Webhooks payload `{type, timestamp, data}`, so one receiver reads both alike.
 */
export function pushedEventJson(event: PushedEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

/** Trade statuses after which a trade's stream ends. */
export const TERMINAL_TRADE_STATUSES: ReadonlySet<TradeStatus> = new Set(['SETTLED', 'EXPIRED']);
