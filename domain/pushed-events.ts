import type { AdStatus, TradeStatus } from './statuses.ts';

/**
 * The events the service pushes (docs/flows/pushed-status.md), over server-sent events and
 * webhooks alike. Each is `{type, timestamp, data}` (the Standard Webhooks payload shape); trade
 * events carry the trade as it stands after the change, so a client can act on any one event alone.
 */
export const PUSHED_EVENT_TYPES = [
  'trade.created', 'trade.status_changed', 'trade.proof_ready', 'trade.unlock_due', 'trade.claimed', 'trade.expired', 'ad.confirmed',
] as const;
export type PushedEventType = (typeof PUSHED_EVENT_TYPES)[number];

/**
 * A party as the unlock order (docs/design.md "No party is left without a way out", trades/lifecycle/unlock-order.ts and views.ts
 * `whoseUnlockIsDue`, `unlockableBy`) names it: `MAKER` is the party whose call data targets the
 * ad-chain unlock by default (AdManager, pays the Bridger), `BRIDGER` the order-chain one
 * (OrderPortal, pays the Maker); either may take the unlock in turn.
 */
export type UnlockParty = 'MAKER' | 'BRIDGER';

/** The trade after the change. */
export interface TradeSnapshot {
  tradeId: string;
  adId: string;
  status: TradeStatus;
  proofReady: boolean;
  bridgerClaimed: boolean;
  adCreatorClaimed: boolean;
  /** Whose unlock is due by default (the side in turn's default party), as GET /v1/trades/:id says. */
  unlockDue: UnlockParty | null;
}

export type PushedEventData =
  /** `amount` = `orderAmount` (order token units, what the Bridger deposits); `adAmount` (ad token units) is what the Maker locks and the Bridger is paid. */
  | {
    type: 'trade.created';
    data: TradeSnapshot & {
      routeId: string;
      amount: string;
      orderAmount: string;
      adAmount: string;
      adCreatorAddress: string;
      bridgerAddress: string;
    };
  }
  | { type: 'trade.status_changed'; data: TradeSnapshot & { previousStatus: TradeStatus } }
  | { type: 'trade.proof_ready'; data: TradeSnapshot }
  /**
   * The due unlock may be asked for now (LOCKED and the proof ready): `side` `ad` (AdManager, pays
   * the Bridger) or `order` (OrderPortal, pays the Maker); `unlockableBy` the parties who may ask for
   * it, its default party first (the ad side: the Maker, and the Bridger with `side: "ad"`).
   */
  | { type: 'trade.unlock_due'; data: TradeSnapshot & { unlockDue: UnlockParty; side: 'ad' | 'order'; unlockableBy: UnlockParty[] } }
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

