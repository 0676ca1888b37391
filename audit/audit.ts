import type { Knex } from 'knex';
import { applyAnsweredRequests } from '../ads/apply-request.ts';
import { findAnsweredRequests } from '../ads/confirm.ts';
import { settleLapsedHolds } from '../ads/port.ts';
import { searchStart } from '../chains/timing.ts';
import type { ChainStateReader } from '../chains/state.ts';
import type { TransactionVerifier, VerifiableChain } from '../chains/verify.ts';
import { auditCursor, auditedAdsPage, executedHolds, saveAuditCursor, type AuditedAd, type AuditPhase } from '../db/repositories/audit.ts';
import { findAd } from '../db/repositories/ads.ts';
import { unsettledRequestsPage, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { IdPage, IdPageResult } from '../db/pagination.ts';
import type { ChainConnection, RegistryCache } from '../db/repositories/registry-cache.ts';
import { findTradeLifecycle, openTradesPage, type TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';
import type { Confirmation } from '../trades/orchestrator.ts';
import { orderStateName, stateOf, unreportedOnChain, type ChainDrift, type ChainFact } from '../trades/lifecycle/index.ts';

/** What the audit found the books and the chains disagreeing on, and could not explain by an event. */
export type DriftKind =
  /** The ad's balance on its AdManager (available + locked, or locked) differs from the books'. */
  | 'ad-balance'
  /** The chain carried out an ad request whose event the audit could not find or apply. */
  | 'request-unexplained'
  /** A trade's order is in a state on chain its books cannot reach by a verified event (refunded, missing). */
  | 'trade-state'
  /** An event was found on chain but applying it failed (or auditing the subject failed outright). */
  | 'repair-failed';

export interface Drift {
  kind: DriftKind;
  /** The ad, request or trade concerned. */
  subject: string;
  detail: string;
}

/** A repair: a verified event nobody had reported, now applied. */
export interface Repair {
  kind: 'ad-request' | 'trade';
  subject: string;
  txHash: string;
}

export type { AuditPhase };

/** What one phase of a run covered of its sweep. */
export interface PhaseReport {
  /** Subjects this run read. */
  checked: number;
  /** Subjects of the sweep after where this run stopped (for the next runs): 0 when it reached the end. */
  left: number;
  /** True when this run stopped before the end of the sweep (its item or time budget spent). */
  truncated: boolean;
}

export interface AuditReport {
  ads: number;
  trades: number;
  /** Subjects whose chain cannot be read now (no RPC URL, an RPC outage, a search before its retention window): neither checked nor drift. */
  unchecked: number;
  repairs: Repair[];
  drifts: Drift[];
  /** Requests the chain says never ran, past their deadline and grace, expired by this run (their holds given back). */
  expired: string[];
  phases: Record<AuditPhase, PhaseReport>;
  /** How long the run took. */
  durationMs: number;
}

/** How much one phase of a run may do (BOOKS_AUDIT_PHASE_MAX_ITEMS, _SECONDS, BOOKS_AUDIT_READ_CONCURRENCY). */
export interface AuditBudget {
  /** Most subjects a phase reads per run. */
  maxItems: number;
  /** Seconds a phase may spend starting reads; those under way then finish. */
  seconds: number;
  /** Subjects a phase reads at once. */
  concurrency: number;
}

export interface AuditDeps {
  knex: Knex;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
  chainState: ChainStateReader;
  /** SIGNED_REQUEST_TTL_SECONDS: bounds how far back the logs are searched (`searchStart`). */
  signedRequestTtlSeconds: number;
  /** CONFIRM_GRACE_SECONDS: a request unconfirmed this long after its deadline has lapsed (its hold is settled). */
  confirmGraceSeconds: number;
  budget: AuditBudget;
  /** Delivers a found trade transaction to the lifecycle, as a client's confirmation would (the orchestrator's `confirm`). */
  confirmTrade(tradeId: string, confirmation: Confirmation): Promise<unknown>;
}

/**
 * The periodic audit of the books against the chains ("The chains are the truth"): every ad
 * request the chain carried out but nobody confirmed is found by its reqHash and applied, and one
 * the chain says never ran is expired once its deadline and grace have passed (its hold given back
 * by the ad's own rule, ads/lapsed-holds.ts); every open trade whose order moved on chain without
 * a confirmation (deposit, lock, either unlock, the lock's release after lockExpiry) has its event
 * found by order hash and delivered to the lifecycle; then every open ad's balances are compared
 * with its AdManager. What a verified event explains is repaired; everything else is reported as
 * drift (for the metric and the alert), never guessed at.
 *
 * The three phases (requests, trades, ad balances) each sweep their subjects in id order within
 * their own budget (`deps.budget`: items, seconds, reads in flight) and keep a cursor in the
 * database where they stopped, which the next run (in any process) continues from: a flood of
 * subjects in one phase delays only that phase's sweep, never the others', and a run's length is
 * bounded whatever the tables hold.
 */
export function createAudit(deps: AuditDeps): { run(): Promise<AuditReport> } {
  const { knex } = deps;

  async function chainOf(chainId: string): Promise<(ChainConnection & VerifiableChain) | undefined> {
    const chain = await deps.registryCache.chain(chainId);
    if (!chain?.rpcUrl) return undefined;
    return { ...chain, rpcUrl: chain.rpcUrl };
  }

  /** Asks the chain whether the request ran: applies its event when it did; expires it, once lapsed, when it did not. */
  async function auditRequest(request: AdRequestRecord, report: AuditReport, cutoff: Date): Promise<void> {
    const chain = await chainOf(request.chainId);
    if (!chain) return void report.unchecked++;
    const issued = {
      contractAddress: request.contractAddress, action: request.action, reqHash: request.reqHash, authToken: request.authToken,
      since: searchStart(request.deadline, deps.signedRequestTtlSeconds),
    };
    const executed = await deps.chainState.requestExecuted(chain, issued);
    if (executed === undefined) return void report.unchecked++;
    if (executed && await applyExecuted(request, chain, issued, report)) return;
    // Past its deadline and grace: settled now as any action on its ad would settle it first, so a
    // request nobody acts on again (a PENDING ad's create) is not read from the chain forever.
    if (request.status !== 'PENDING' || request.deadline > cutoff) return;
    await settleLapsedHolds(knex, { adId: request.adId, answers: new Map([[request.id, executed]]) });
    if (!executed) report.expired.push(request.id);
  }

  /** Finds the transaction that carried the request out and applies its event; true when it did. */
  async function applyExecuted(
    request: AdRequestRecord, chain: ChainConnection & VerifiableChain, issued: Parameters<ChainStateReader['findRequestTransaction']>[1], report: AuditReport,
  ): Promise<boolean> {
    const txHash = await deps.chainState.findRequestTransaction(chain, issued);
    if (!txHash) {
      report.drifts.push({
        kind: 'request-unexplained',
        subject: request.id,
        detail: `${request.action} ${request.reqHash} ran on chain ${chain.chainId} but its event was not found`,
      });
      return false;
    }
    try {
      const ad = (await findAd(knex, request.adId))!;
      const found = await findAnsweredRequests({ knex, verifier: deps.verifier, chain, ad, txHash });
      if (found.answered.length === 0) return true;
      // Read concurrently, two requests answered by one transaction may both get here: one applies it.
      const applied = await knex.transaction((trx) => applyAnsweredRequests(trx, ad.id, found.txHash, found.answered));
      if (applied > 0) report.repairs.push({ kind: 'ad-request', subject: request.id, txHash: found.txHash });
      return true;
    } catch (error) {
      report.drifts.push({ kind: 'repair-failed', subject: request.id, detail: `${txHash}: ${(error as Error).message}` });
      return false;
    }
  }

  /** Finds the step the chain shows that the books lack and delivers it, or reports a drift; true when it repaired one. */
  async function auditTrade(trade: TradeLifecycleRecord, report: AuditReport): Promise<boolean> {
    const [adChain, orderChain] = [await chainOf(trade.adChainId), await chainOf(trade.orderChainId)];
    const portal = trade.orderParams.orderPortal;
    const manager = trade.orderParams.adManager;
    if (!adChain || !orderChain) return (report.unchecked++, false);
    const [portalState, managerState] = [
      await deps.chainState.orderState(orderChain, portal, trade.orderHash),
      await deps.chainState.orderState(adChain, manager, trade.orderHash),
    ];
    if (portalState === undefined || managerState === undefined) return (report.unchecked++, false);
    // Which step the chain shows that the books lack, or what the books cannot reach: the lifecycle
    // decides it from the named order states (trades/lifecycle/unreported.ts, over its chain-facts table).
    const found = unreportedOnChain(
      stateOf(trade),
      { OrderPortal: orderStateName('OrderPortal', portalState), AdManager: orderStateName('AdManager', managerState) },
    );
    if ('deliver' in found) {
      const { deliver: fact } = found;
      const [chain, contract] = fact.contract === 'AdManager' ? [adChain, manager] : [orderChain, portal];
      return deliver(trade, chain, contract, fact, report);
    }
    const detail: Record<ChainDrift, string> = {
      'deposit-missing': `the deposit of order ${trade.orderHash} is not on chain ${orderChain.chainId}`,
      'lock-missing': `the lock of order ${trade.orderHash} is not on chain ${adChain.chainId}`,
      'deposit-refunded': `the deposit of order ${trade.orderHash} was refunded to the Bridger on chain`,
    };
    for (const drift of found.drifts) report.drifts.push({ kind: 'trade-state', subject: trade.id, detail: detail[drift] });
    return false;
  }

  /** Finds the transaction of the step `fact` by order hash and delivers it through the step's endpoint, as its party would have. */
  async function deliver(trade: TradeLifecycleRecord, chain: VerifiableChain, contract: string, fact: ChainFact, report: AuditReport): Promise<boolean> {
    const { event, confirmation: kind } = fact;
    const txHash = await deps.chainState.findEventTransaction(chain, {
      contractAddress: contract, event, topics: { key: trade.orderHash }, since: searchStart(trade.reservationExpiresAt, deps.signedRequestTtlSeconds),
    });
    if (!txHash) {
      report.drifts.push({
        kind: 'trade-state',
        subject: trade.id,
        detail: `${event} of order ${trade.orderHash} happened on chain ${chain.chainId} but its transaction was not found`,
      });
      return false;
    }
    try {
      await deps.confirmTrade(trade.id, { kind, txHash });
      report.repairs.push({ kind: 'trade', subject: trade.id, txHash });
      return true;
    } catch (error) {
      report.drifts.push({ kind: 'repair-failed', subject: trade.id, detail: `${event} ${txHash}: ${(error as Error).message}` });
      return false;
    }
  }

  async function auditAdBalance(ad: AuditedAd, held: ReadonlyMap<string, bigint>, report: AuditReport): Promise<void> {
    report.ads++;
    const chain = await chainOf(ad.adChainId);
    const onChain = chain ? await deps.chainState.ad(chain, chain.adManagerAddress, ad.id) : undefined;
    if (!onChain) return void report.unchecked++;
    // What the books say is still in the AdManager: all that was funded, less what left (paid out,
    // or executed on chain by a request not yet applied). Locks are the trades' locked amounts.
    const booksTotal = BigInt(ad.poolAmount) - BigInt(ad.paidOutAmount) - (held.get(ad.id) ?? 0n);
    const chainTotal = onChain.available + onChain.locked;
    if (chainTotal !== booksTotal || onChain.locked !== BigInt(ad.lockedAmount)) {
      report.drifts.push({
        kind: 'ad-balance', subject: ad.id,
        detail: `chain ${ad.adChainId}: available ${onChain.available}, locked ${onChain.locked}; books: in the ` +
          `contract ${booksTotal}, locked ${ad.lockedAmount}`,
      });
    }
  }

  /**
   * One phase's share of a run: the page of its sweep after the phase's cursor (at most
   * `maxItems`), `check`ed `concurrency` at a time until the page is done or `seconds` have passed
   * (reads under way then finish); the cursor moves to the last subject started, or back to the
   * start once the sweep reached the end.
   */
  async function sweep<T extends { id: string }>(
    phase: AuditPhase, report: AuditReport, read: (page: IdPage) => Promise<IdPageResult<T>>, check: (subject: T) => Promise<void>,
  ): Promise<void> {
    const { maxItems, seconds, concurrency } = deps.budget;
    const stopAt = Date.now() + seconds * 1000;
    const after = await auditCursor(knex, phase);
    const { rows, left } = await read({ after, limit: maxItems });
    let next = 0;
    const worker = async () => {
      while (next < rows.length && Date.now() < stopAt) {
        const subject = rows[next++]!;
        // One subject that cannot be audited (a repair that throws) must not stop the sweep at the
        // same place run after run: it is reported, and the sweep goes on past it.
        await check(subject).catch((error: unknown) => {
          report.drifts.push({ kind: 'repair-failed', subject: subject.id, detail: `auditing ${phase}: ${(error as Error).message}` });
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, worker));
    const remaining = left + rows.length - next;
    await saveAuditCursor(knex, phase, remaining === 0 ? null : rows[next - 1]?.id ?? after);
    report.phases[phase] = { checked: next, left: remaining, truncated: remaining > 0 };
  }

  return {
    async run() {
      const started = Date.now();
      const report: AuditReport = {
        ads: 0, trades: 0, unchecked: 0, repairs: [], drifts: [], expired: [],
        phases: {
          requests: { checked: 0, left: 0, truncated: false },
          trades: { checked: 0, left: 0, truncated: false },
          'ad-balances': { checked: 0, left: 0, truncated: false },
        },
        durationMs: 0,
      };
      // In this order, so that the balances are compared after the requests and trade steps they
      // depend on were applied; each phase within its own budget, so none waits on another's flood.
      const cutoff = new Date(started - deps.confirmGraceSeconds * 1000);
      await sweep('requests', report, (page) => unsettledRequestsPage(knex, page), (request) => auditRequest(request, report, cutoff));
      await sweep('trades', report, (page) => openTradesPage(knex, page), async (open) => {
        report.trades++;
        // Each repair is one lifecycle step; the next may be due too (a lock and its unlock, both unreported).
        let trade: TradeLifecycleRecord | undefined = open;
        for (let step = 0; trade && step < 4 && await auditTrade(trade, report); step++) trade = await findTradeLifecycle(knex, open.id);
      });
      let held: ReadonlyMap<string, bigint> = new Map();
      await sweep('ad-balances', report, async (page) => {
        const found = await auditedAdsPage(knex, page);
        held = await executedHolds(knex, found.rows.map((ad) => ad.id));
        return found;
      }, (ad) => auditAdBalance(ad, held, report));
      report.durationMs = Date.now() - started;
      return report;
    },
  };
}
