import { createQuotes } from './use-cases/quote.ts';
import { createUnbackedReservationsRecheck } from './use-cases/unbacked-reservations.ts';
import { tradeContext, type TradesDeps } from './use-cases/context.ts';
import { createTrade } from './use-cases/create-trade.ts';
import { tradeParams } from './use-cases/trade-params.ts';
import { depositRequest } from './use-cases/deposit-request.ts';
import { tradeOfDepositTransaction } from './use-cases/find-deposit.ts';
import { lockTrade } from './use-cases/lock-trade.ts';
import { issueUnlock } from './use-cases/issue-unlock.ts';
import { confirmFoundTrade, confirmTrade } from './use-cases/confirm-trade.ts';
import { expireReservation } from './use-cases/apply-trade-event.ts';
import { prepareKeeperSends, reportKeeperSends } from './use-cases/keeper-sends.ts';
import { DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS } from './lifecycle/index.ts';

export type { TradesDeps, TradesSettings } from './use-cases/context.ts';
export type { CreateTradeInput } from './use-cases/create-trade.ts';
export { RESERVATION_CHAIN_MARGIN_SECONDS } from './lifecycle/index.ts';

/**
 * The trade use cases behind `/v1/trades/*` and `/v1/quotes`, one file each in trades/use-cases/:
 * reserve and sign (create), hand out lock and unlock call data to the right party at the right
 * time, and verify and apply confirmations (their follow-ups handed to the orchestrator).
 */
export function createTradesService(deps: TradesDeps) {
  const ctx = tradeContext(deps);
  const unbackedRecheck = createUnbackedReservationsRecheck(
    { ...deps, expireReservation: expireReservation(ctx) },
    { intervalMs: (deps.settings.unbackedRecheckSeconds ?? 10) * 1000, nowMs: ctx.nowMs },
  );
  return {
    /** `POST /v1/trades` (use-cases/create-trade.ts). */
    create: createTrade(ctx, unbackedRecheck),
    /** `GET /v1/quotes` (trades/use-cases/quote.ts): the ads create would reserve against for an amount now, best first, or why none would. */
    quote: createQuotes({ knex: deps.knex, registryCache: deps.registryCache, settings: deps.settings, nowMs: ctx.nowMs }).quote,
    /** The order parameters and the order hash, for either party (use-cases/trade-params.ts). */
    params: tradeParams(ctx),
    /** The Bridger's kept deposit request again, while it is valid (use-cases/deposit-request.ts). */
    depositRequest: depositRequest(ctx),
    /** Which of the caller's trades awaiting their deposit a transaction not yet confirmed deposited (use-cases/find-deposit.ts). */
    tradeOfDepositTransaction: tradeOfDepositTransaction(ctx),
    /** The Maker's signed lock call data (use-cases/lock-trade.ts). */
    lock: lockTrade(ctx),
    /** Signed unlock call data with the proof (use-cases/issue-unlock.ts). */
    unlock: issueUnlock(ctx),
    /** A party's reported transaction, verified and applied (use-cases/confirm-trade.ts). */
    confirm: confirmTrade(ctx),
    /** A transaction the books audit found, applied like a party's (use-cases/confirm-trade.ts). */
    confirmFound: confirmFoundTrade(ctx),
    /** What the keeper owes, judged on each chain's clock and given its call once due (use-cases/keeper-sends.ts); in a process that signs. */
    prepareKeeperSends: prepareKeeperSends(ctx, { unlockAfterSeconds: deps.settings.keeperUnlockAfterSeconds ?? DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS }),
    /** The keeper's final sends handed to their trades, verified like a party's confirmation (use-cases/keeper-sends.ts). */
    reportKeeperSends: reportKeeperSends(ctx, deps.onKeeperReportDeferred),
  };
}

export type TradesService = ReturnType<typeof createTradesService>;
