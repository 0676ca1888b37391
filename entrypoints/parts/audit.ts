import type { Knex } from 'knex';
import { createAudit, type AuditReport } from '../../audit/audit.ts';
import type { AuditMetrics } from '../../audit/metrics.ts';
import type { Config } from '../../config/config.ts';
import type { TradesService } from '../../trades/service.ts';
import type { ChainReaders } from './chains.ts';

/**
 * One run of the books audit (audit/), its report observed by the audit metrics. A trade
 * transaction nobody reported is confirmed through `trades()` (the trades use case, built on first
 * use), as a client's confirmation would be.
 */
export function booksAudit(
  config: Config, knex: Knex, chains: ChainReaders, metrics: AuditMetrics, trades: () => TradesService,
): () => Promise<AuditReport> {
  const audit = createAudit({
    knex, registryCache: chains.registryCache, verifier: chains.verifier, chainState: chains.chainState,
    signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS, confirmGraceSeconds: config.CONFIRM_GRACE_SECONDS,
    budget: {
      maxItems: config.BOOKS_AUDIT_PHASE_MAX_ITEMS, seconds: config.BOOKS_AUDIT_PHASE_SECONDS, concurrency: config.BOOKS_AUDIT_READ_CONCURRENCY,
    },
    confirmTrade: (tradeId, confirmation) => trades().confirmFound(tradeId, confirmation.kind, confirmation.txHash),
  });
  return async () => {
    metrics.started();
    const report = await audit.run();
    metrics.observe(report);
    return report;
  };
}
