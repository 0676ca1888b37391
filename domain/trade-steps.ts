/** The verified on-chain steps of a trade, as the Trade object lists its transactions. */
export const TRADE_STEPS = ['deposit', 'lock', 'adUnlock', 'orderUnlock', 'lockRelease', 'refund'] as const;

/** Who sent a trade's transaction: a party (the one that reported it) or the relayer's keeper. */
export const TRANSACTION_SENDERS = ['bridger', 'maker', 'relayer'] as const;

export type TransactionSender = (typeof TRANSACTION_SENDERS)[number];

export type TradeStep = (typeof TRADE_STEPS)[number];

/**
 * Which step a verified contract event of a trade was: the event name and the chain it was on
 * (an unlock on the ad chain paid the Bridger, one on the order chain paid the Maker; a route's two
 * chains always differ). Undefined for an event no trade step emits.
 */
export function tradeStepOf(event: string, chainId: string, trade: { adChainId: string; orderChainId: string }): TradeStep | undefined {
  switch (event) {
    case 'OrderCreated': return 'deposit';
    case 'OrderLocked': return 'lock';
    case 'LockReleased': return 'lockRelease';
    case 'OrderRefunded': return chainId === trade.orderChainId ? 'refund' : undefined;
    case 'OrderUnlocked': return chainId === trade.adChainId ? 'adUnlock' : chainId === trade.orderChainId ? 'orderUnlock' : undefined;
    default: return undefined;
  }
}
