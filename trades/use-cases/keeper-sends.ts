import { adapterOf } from '../../chains/adapters.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { ttlWithin } from '../../chains/timing.ts';
import { recordChainEvent } from '../../db/repositories/chain-events.ts';
import {
  endUnsentKeeperSend, markKeeperSendReported, noteKeeperSendDue, owedKeeperSends, queueKeeperSend, unreportedKeeperSends,
  type FinishedSendRow, type OwedSendRow,
} from '../../db/repositories/keeper-owed.ts';
import { findTradeLifecycle, touchTrade, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import type { ChainConnection } from '../../db/repositories/registry-cache.ts';
import { encodeProof, type Groth16Proof } from '../../prover/solidity.ts';
import {
  keeperGraceSeconds, keeperStillOwes, keeperVerdict, stateOf, unlockWindowEnd, type KeeperAction, type KeeperDuty, type UnlockSide,
} from '../lifecycle/index.ts';
import { askableChain, chainEventRef } from '../applier/verify-confirmation.ts';
import { callTarget, type TradeContext } from './context.ts';
import { confirmFoundTrade } from './confirm-trade.ts';

/** How many owed or final sends one pass takes: the rest wait for the next. */
const PASS_LIMIT = 100;

/** What one pass over the owed sends did. */
export interface PreparePass {
  queued: number;
  waiting: number;
  expired: number;
  cancelled: number;
}

/** What the keeper's duties need beyond the trades' settings. */
export interface KeeperDutySettings {
  /** KEEPER_UNLOCK_AFTER_SECONDS: the grace a party has to send an unlock before the keeper does. */
  unlockAfterSeconds: number;
}

const dutyOf = (row: { action: string; side: string }): KeeperDuty => ({ action: row.action as KeeperAction, side: row.side as UnlockSide });

/**
 * One pass over what the machine says the keeper owes (rows `owed`): each judged on its chain's
 * final time (keeper-duties.ts `keeperVerdict`), and once due given its call: an unlock's relayer
 * request is signed here (this process holds the request signer; the sender only holds the gas key),
 * valid until its side's window closes, dated by the chain's clock. A duty the trade no longer owes
 * is cancelled, one whose window closed expired. Every step is conditional on the row's status, so
 * passes in several processes neither sign twice nor lose a row.
 */
export function prepareKeeperSends(ctx: TradeContext, settings: KeeperDutySettings) {
  return async (): Promise<PreparePass> => {
    const pass: PreparePass = { queued: 0, waiting: 0, expired: 0, cancelled: 0 };
    // Each chain's time read once per pass, whatever number of rows wait on it.
    const times = new Map<string, Promise<bigint | undefined>>();
    const chainTime = (chainId: string) => {
      if (!times.has(chainId)) times.set(chainId, ctx.chainOf(chainId).then((chain) => ctx.deps.chainState.finalTime(chain)));
      return times.get(chainId)!;
    };
    // Every owed row, a page at a time: rows waiting hours for their time (a refund, a release) never hide newer ones.
    let after: string | undefined;
    for (let page = await owedKeeperSends(ctx.knex, PASS_LIMIT); page.length > 0; page = await owedKeeperSends(ctx.knex, PASS_LIMIT, after)) {
      for (const owed of page) {
        // One row's trouble (its chain unregistered or unreadable, a signer error) holds up no other row.
        const outcome = await prepareOne(ctx, settings, owed, chainTime).catch((error: unknown) => {
          ctx.deps.onKeeperPrepareFailed?.(owed, error);
          return 'waiting' as const;
        });
        pass[outcome] += 1;
      }
      after = page.at(-1)!.id;
    }
    return pass;
  };
}

async function prepareOne(
  ctx: TradeContext, settings: KeeperDutySettings, owed: OwedSendRow, chainTime: (chainId: string) => Promise<bigint | undefined>,
): Promise<keyof PreparePass> {
  const duty = dutyOf(owed);
  const chainNow = await chainTime(owed.chainId);
  // The chain cannot tell its time now: nothing is judged on another clock.
  if (chainNow === undefined) return 'waiting';
  // A row seen due before and still inside its grace waits without a read of its trade (a party that sends
  // meanwhile cancels it in its own transaction).
  if (owed.dueChainTime !== null && keeperVerdict(owed, owed.dueChainTime, owed.delaySeconds, chainNow) === 'wait') return 'waiting';
  const trade = await findTradeLifecycle(ctx.knex, owed.tradeId);
  if (!trade || !keeperStillOwes(stateOf(trade), duty)) {
    await endUnsentKeeperSend(ctx.knex, owed.id, 'cancelled', 'no longer owed: the trade moved on');
    return 'cancelled';
  }
  const chain = await ctx.chainOf(owed.chainId);
  const grace = keeperGraceSeconds(duty, settings.unlockAfterSeconds);
  let dueAt = owed.dueChainTime;
  if (dueAt === null) {
    dueAt = chainNow;
    await noteKeeperSendDue(ctx.knex, owed.id, chainNow, grace);
  }
  const graceGiven = owed.dueChainTime === null ? grace : owed.delaySeconds;
  const verdict = keeperVerdict(owed, dueAt, graceGiven, chainNow);
  if (verdict === 'wait') return 'waiting';
  if (verdict === 'expired') {
    await endUnsentKeeperSend(ctx.knex, owed.id, 'expired', `its window closed at ${owed.notAfter} (chain time) before it was due`);
    return 'expired';
  }
  const call = await keeperCallOf(ctx, trade, duty, chain, chainNow);
  if (!call) return 'waiting';
  return (await queueKeeperSend(ctx.knex, owed.id, call)) ? 'queued' : 'cancelled';
}

/** The transaction for `duty`: a signed unlock with the proof (undefined while the proof is missing), or the timeout call. */
async function keeperCallOf(ctx: TradeContext, trade: TradeLifecycleRecord, duty: KeeperDuty, chain: ChainConnection, chainNow: bigint) {
  const adapter = adapterOf(chain.kind);
  const { orderParams } = trade;
  if (duty.action !== 'unlock') return adapter.keeperCall({ action: duty.action, orderParams });
  if (!trade.proof) return undefined;
  const contract = duty.side === 'ad' ? orderParams.adManager : orderParams.orderPortal;
  const ttl = ttlWithin(unlockWindowEnd(duty.side, orderParams), Number(chainNow), ctx.settings.signedRequestTtlSeconds);
  if (ttl <= 0) return undefined;
  const signed = await buildSignedCallData({
    target: callTarget(chain, contract),
    action: 'unlock',
    fields: { orderHash: trade.orderHash, nullifierHash: trade.proof.nullifierHash, targetRoot: trade.proof.targetRoot },
    signers: ctx.deps.signers,
    ttlSeconds: ttl,
    // The request's deadline is compared with the chain's clock: it is dated by it.
    now: Number(chainNow) * 1000,
  });
  return adapter.keeperCall({ action: 'unlock', signed, orderParams, proof: encodeProof(trade.proof.proof as Groth16Proof) });
}

/** What one pass over the final sends did. */
export interface ReportPass {
  reported: number;
  /** Not handed over now (the chain could not verify it yet): the next pass tries again. */
  deferred: number;
}

/**
 * Hands every final keeper send to its trade, verified on chain like a party's confirmation and
 * recorded as sent by the relayer: an unlock or the lock's release through the same confirmation
 * as `/unlock/confirm` and `/confirm` (the machine moves, the books follow), the refund as the
 * trade's verified transaction (the trade is already over). A reverted send is only marked. Each
 * is marked reported once handed over; a repeat is a duplicate the machine ignores.
 */
export function reportKeeperSends(ctx: TradeContext, log?: (send: FinishedSendRow, error: unknown) => void) {
  const confirmFound = confirmFoundTrade(ctx);
  return async (): Promise<ReportPass> => {
    const pass: ReportPass = { reported: 0, deferred: 0 };
    for (const send of await unreportedKeeperSends(ctx.knex, PASS_LIMIT)) {
      try {
        if (send.status === 'confirmed' && send.txHash) {
          if (send.action === 'refund') await recordRefund(ctx, send.tradeId, send.txHash);
          else await confirmFound(send.tradeId, send.action === 'unlock' ? 'unlock' : 'deposit-or-lock', send.txHash, 'relayer');
        }
        await markKeeperSendReported(ctx.knex, send.id);
        pass.reported += 1;
      } catch (error) {
        log?.(send, error);
        pass.deferred += 1;
      }
    }
    return pass;
  };
}

/** The keeper's refund verified on the order chain (its OrderRefunded event for this order) and recorded as the trade's transaction. */
async function recordRefund(ctx: TradeContext, tradeId: string, txHash: string): Promise<void> {
  const trade = await findTradeLifecycle(ctx.knex, tradeId);
  if (!trade) return;
  const chain = await askableChain(ctx.deps.registryCache, trade.orderChainId);
  const verified = await ctx.deps.verifier.verify(chain, {
    txHash, contractAddress: trade.orderParams.orderPortal, action: 'refund', args: { orderHash: trade.orderHash, amount: trade.orderParams.orderAmount },
  });
  await ctx.knex.transaction(async (trx) => {
    await recordChainEvent(trx, { ...chainEventRef(verified), subjectKind: 'trade', subjectId: tradeId, sentBy: 'relayer' });
    await touchTrade(trx, tradeId);
  });
}
