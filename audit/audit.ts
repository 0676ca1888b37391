import type { Knex } from 'knex';
import { applyAnsweredRequests } from '../ads/apply-request.ts';
import { findAnsweredRequests } from '../ads/confirm.ts';
import type { BridgeEventName } from '../chains/evm/abi.ts';
import { searchStart } from '../chains/timing.ts';
import type { ChainStateReader } from '../chains/state.ts';
import type { TransactionVerifier, VerifiableChain } from '../chains/verify.ts';
import { auditedAds, executedHolds } from '../db/repositories/audit.ts';
import { findAd } from '../db/repositories/ads.ts';
import { requestsInStatus, type AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { ChainConnection, RegistryCache } from '../db/repositories/registry-cache.ts';
import { findTradeLifecycle, openTrades, type TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';
import type { Confirmation } from '../trades/orchestrator.ts';

/** What the audit found the books and the chains disagreeing on, and could not explain by an event. */
export type DriftKind =
  /** The ad's balance on its AdManager (available + locked, or locked) differs from the books'. */
  | 'ad-balance'
  /** The chain carried out an ad request whose event the audit could not find or apply. */
  | 'request-unexplained'
  /** A trade's order is in a state on chain its books cannot reach by a verified event (refunded, missing). */
  | 'trade-state'
  /** An event was found on chain but applying it failed. */
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

export interface AuditReport {
  ads: number;
  trades: number;
  /** Subjects whose chain cannot be read now (no RPC URL, an RPC outage, a search before its retention window): neither checked nor drift. */
  unchecked: number;
  repairs: Repair[];
  drifts: Drift[];
}

export interface AuditDeps {
  knex: Knex;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
  chainState: ChainStateReader;
  /** SIGNED_REQUEST_TTL_SECONDS: bounds how far back the logs are searched (`searchStart`). */
  signedRequestTtlSeconds: number;
  /** Delivers a found trade transaction to the lifecycle, as a client's confirmation would (the orchestrator's `confirm`). */
  confirmTrade(tradeId: string, confirmation: Confirmation): Promise<unknown>;
}

/**
 * The periodic audit of the books against the chains ("The chains are the truth"): every ad
 * request the chain carried out but nobody confirmed is found by its reqHash and applied; every
 * open trade whose order moved on chain without a confirmation (deposit, lock, either unlock, the
 * lock's release after lockExpiry) has
 * its event found by order hash and delivered to the lifecycle; then every open ad's balances are
 * compared with its AdManager. What a verified event explains is repaired; everything else is
 * reported as drift (for the metric and the alert), never guessed at.
 */
export function createAudit(deps: AuditDeps): { run(): Promise<AuditReport> } {
  const { knex } = deps;

  async function chainOf(chainId: string): Promise<(ChainConnection & VerifiableChain) | undefined> {
    const chain = await deps.registryCache.chain(chainId);
    if (!chain?.rpcUrl) return undefined;
    return { ...chain, rpcUrl: chain.rpcUrl };
  }

  async function auditRequest(request: AdRequestRecord, report: AuditReport): Promise<void> {
    const chain = await chainOf(request.chainId);
    if (!chain) return void report.unchecked++;
    const issued = {
      contractAddress: request.contractAddress, action: request.action, reqHash: request.reqHash, authToken: request.authToken,
      since: searchStart(request.deadline, deps.signedRequestTtlSeconds),
    };
    const executed = await deps.chainState.requestExecuted(chain, issued);
    if (executed === undefined) return void report.unchecked++;
    if (!executed) return;
    const txHash = await deps.chainState.findRequestTransaction(chain, issued);
    if (!txHash) {
      report.drifts.push({ kind: 'request-unexplained', subject: request.id, detail: `${request.action} ${request.reqHash} ran on chain ${chain.chainId} but its event was not found` });
      return;
    }
    try {
      const ad = (await findAd(knex, request.adId))!;
      const found = await findAnsweredRequests({ knex, verifier: deps.verifier, chain, ad, txHash });
      if (found.answered.length === 0) return;
      await knex.transaction((trx) => applyAnsweredRequests(trx, ad.id, found.txHash, found.answered));
      report.repairs.push({ kind: 'ad-request', subject: request.id, txHash: found.txHash });
    } catch (error) {
      report.drifts.push({ kind: 'repair-failed', subject: request.id, detail: `${txHash}: ${(error as Error).message}` });
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
    const drift = (detail: string) => report.drifts.push({ kind: 'trade-state', subject: trade.id, detail });
    // OrderPortal: 0 None, 1 Deposited, 2 Unlocked, 3 Refunded. AdManager: 0 None, 1 Locked, 2 Unlocked, 3 Released.
    const missing: [VerifiableChain, string, BridgeEventName, Confirmation['kind']][] = [];
    if (trade.status === 'PENDING' && portalState >= 1) missing.push([orderChain, portal, 'OrderCreated', 'deposit-or-lock']);
    if (trade.status === 'DEPOSITED' && managerState >= 1) missing.push([adChain, manager, 'OrderLocked', 'deposit-or-lock']);
    if (trade.status === 'LOCKED' && !trade.bridgerClaimed && managerState === 2) missing.push([adChain, manager, 'OrderUnlocked', 'unlock']);
    if (trade.status === 'LOCKED' && !trade.adCreatorClaimed && portalState === 2) missing.push([orderChain, portal, 'OrderUnlocked', 'unlock']);
    // The Maker's lock released after lockExpiry, the Bridger's unlock never made: the trade ends
    // and the lock is back in the ad (the Maker reports it through /confirm, as a lock).
    if (trade.status === 'LOCKED' && !trade.bridgerClaimed && managerState === 3) missing.push([adChain, manager, 'LockReleased', 'deposit-or-lock']);
    if (missing.length > 0) return deliver(trade, missing[0]!, report);
    if (trade.status !== 'PENDING' && portalState === 0) drift(`the deposit of order ${trade.orderHash} is not on chain ${orderChain.chainId}`);
    if (trade.status === 'LOCKED' && managerState === 0) drift(`the lock of order ${trade.orderHash} is not on chain ${adChain.chainId}`);
    if ((trade.status === 'DEPOSITED' || trade.status === 'LOCKED') && portalState === 3) drift(`the deposit of order ${trade.orderHash} was refunded to the Bridger on chain`);
    return false;
  }

  async function deliver(
    trade: TradeLifecycleRecord, [chain, contract, event, kind]: [VerifiableChain, string, BridgeEventName, Confirmation['kind']], report: AuditReport,
  ): Promise<boolean> {
    const txHash = await deps.chainState.findEventTransaction(chain, {
      contractAddress: contract, event, topics: { key: trade.orderHash }, since: searchStart(trade.reservationExpiresAt, deps.signedRequestTtlSeconds),
    });
    if (!txHash) {
      report.drifts.push({ kind: 'trade-state', subject: trade.id, detail: `${event} of order ${trade.orderHash} happened on chain ${chain.chainId} but its transaction was not found` });
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

  async function auditAdBalances(report: AuditReport): Promise<void> {
    const held = await executedHolds(knex);
    for (const ad of await auditedAds(knex)) {
      report.ads++;
      const chain = await chainOf(ad.adChainId);
      const onChain = chain ? await deps.chainState.ad(chain, chain.adManagerAddress, ad.id) : undefined;
      if (!onChain) {
        report.unchecked++;
        continue;
      }
      // What the books say is still in the AdManager: all that was funded, less what left (paid out,
      // or executed on chain by a request not yet applied). Locks are the trades' locked amounts.
      const booksTotal = BigInt(ad.poolAmount) - BigInt(ad.paidOutAmount) - (held.get(ad.id) ?? 0n);
      const chainTotal = onChain.available + onChain.locked;
      if (chainTotal !== booksTotal || onChain.locked !== BigInt(ad.lockedAmount)) {
        report.drifts.push({
          kind: 'ad-balance', subject: ad.id,
          detail: `chain ${ad.adChainId}: available ${onChain.available}, locked ${onChain.locked}; books: in the contract ${booksTotal}, locked ${ad.lockedAmount}`,
        });
      }
    }
  }

  return {
    async run() {
      const report: AuditReport = { ads: 0, trades: 0, unchecked: 0, repairs: [], drifts: [] };
      for (const request of await requestsInStatus(knex, ['PENDING', 'EXECUTED'])) await auditRequest(request, report);
      for (const open of await openTrades(knex)) {
        report.trades++;
        // Each repair is one lifecycle step; the next may be due too (a lock and its unlock, both unreported).
        let trade: TradeLifecycleRecord | undefined = open;
        for (let step = 0; trade && step < 4 && await auditTrade(trade, report); step++) trade = await findTradeLifecycle(knex, open.id);
      }
      await auditAdBalances(report);
      return report;
    },
  };
}
