import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** How a keeper send ended, or what happened on the way (`replaced`: a higher-fee transaction took its place). */
export type KeeperSendResult = 'confirmed' | 'reverted' | 'refused' | 'failed' | 'replaced' | 'capped' | 'expired' | 'cancelled';

/** What the keeper's senders report; set from each pass, so a scrape reads no chain and no database. */
export interface KeeperMetrics {
  /** The account's native balance in its smallest unit (wei, stroops), with that unit's `decimals` (default 18). */
  balance(chainId: string, amount: bigint, decimals?: number): void;
  send(chainId: string, action: string, result: KeeperSendResult): void;
  pending(chainId: string, count: number): void;
  /** Seconds from a send becoming due (its call given) to its first transaction signed and recorded. */
  sendDelay(chainId: string, action: string, seconds: number): void;
  /** A chain the keeper sends on: its sends and delays exist at zero from the start, so dashboards and alerts see them. */
  chainKnown(chainId: string): void;
}

/** What the keeper sends (trades/lifecycle/machine.ts KeeperAction). */
const KEEPER_ACTIONS = ['unlock', 'refund', 'releaseLock'] as const;

/**
 * The keeper's metrics on `registry`: `relayer_keeper_balance{chain}` (the account's native balance,
 * in the chain's whole units), `relayer_keeper_sends_total{chain,action,result}` and
 * `relayer_keeper_pending_transactions{chain}` (sends queued or waiting for their receipt at depth).
 */
export function keeperMetrics(registry: Registry): KeeperMetrics {
  const balance = new Gauge({
    name: 'relayer_keeper_balance', help: "The keeper account's native balance per chain, in whole units (ETH, XLM)",
    labelNames: ['chain'], registers: [registry],
  });
  const sends = new Counter({
    name: 'relayer_keeper_sends_total',
    help: 'Keeper sends by chain, action and result (confirmed, reverted on chain, refused before sending: would revert, failed, '
      + 'replaced: a higher fee sent, capped: stuck at KEEPER_MAX_FEE_GWEI or KEEPER_STELLAR_MAX_FEE_STROOPS, '
      + 'expired: its window closed unsent, cancelled: a party sent it first)',
    labelNames: ['chain', 'action', 'result'], registers: [registry],
  });
  const pending = new Gauge({
    name: 'relayer_keeper_pending_transactions', help: 'Keeper sends per chain not yet final: queued, or sent and waiting for their receipt at finality depth',
    labelNames: ['chain'], registers: [registry],
  });
  const delay = new Histogram({
    name: 'relayer_keeper_send_delay_seconds', help: 'Seconds from a keeper send becoming due to its first transaction signed and recorded',
    labelNames: ['chain', 'action'], buckets: [1, 5, 15, 30, 60, 120, 300, 900, 3600], registers: [registry],
  });
  return {
    sendDelay: (chainId, action, seconds) => delay.observe({ chain: chainId, action }, seconds),
    chainKnown: (chainId) => {
      for (const action of KEEPER_ACTIONS) {
        for (const result of ['confirmed', 'capped'] as const) sends.inc({ chain: chainId, action, result }, 0);
        delay.zero({ chain: chainId, action });
      }
    },
    // 18 decimals on EVM chains, 7 on Stellar; a float gauge is fine for a balance watched for its runway.
    balance: (chainId, amount, decimals = 18) => balance.set({ chain: chainId }, Number(amount) / 10 ** decimals),
    send: (chainId, action, result) => sends.inc({ chain: chainId, action, result }),
    pending: (chainId, count) => pending.set({ chain: chainId }, count),
  };
}
