import type { Knex } from 'knex';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { auditMetrics, type AuditMetrics } from '../../audit/metrics.ts';
import type { Config } from '../../config/config.ts';
import type { ProcessRole } from '../../config/secrets.ts';
import { proverMetrics } from '../../prover/metrics.ts';
import { retentionMetrics, type RetentionMetrics } from '../../retention/metrics.ts';
import { currentTracing, startTracing } from '../../telemetry/tracing.ts';
import { tradeMetrics, type TradeMetrics } from '../../trades/observation/metrics.ts';
import { pushMetrics, type WebhookMetrics } from '../../webhooks/metrics.ts';
import { databaseUpProbe } from '../database-up.ts';

/** A process's telemetry: the registry `/metrics` serves and the metric families its parts observe. */
export interface ProcessTelemetry {
  registry: Registry;
  trades: TradeMetrics;
  audit: AuditMetrics;
  retention: RetentionMetrics;
  push: WebhookMetrics;
  /** METRICS_SAMPLE_SECONDS in milliseconds: how often sampled gauges (database, trades) are read. */
  sampleMs: number;
  /** Stops the database probe and flushes the spans not yet exported: the last of a process's stops. */
  close(): Promise<void>;
}

/**
 * Starts a process's telemetry, first thing: OpenTelemetry spans exported by OTLP when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set (service `relayer-<role>`, telemetry/README.md; nothing
 * otherwise), and one Prometheus registry with the same families in every process (process
 * defaults, prover, trades, audit, retention, webhooks and streams, `relayer_db_up` probed every
 * METRICS_SAMPLE_SECONDS), so a dashboard or rule reads any process the same way. `openStreams`
 * counts the event streams open here (only the API serves them).
 */
export function startTelemetry(config: Config, role: ProcessRole, knex: Knex, openStreams: () => number = () => 0): ProcessTelemetry {
  startTracing(`relayer-${role}`);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  proverMetrics(registry);
  const sampleMs = config.METRICS_SAMPLE_SECONDS * 1000;
  const databaseUp = databaseUpProbe(registry, knex, { intervalMs: sampleMs, timeoutMs: Math.min(2_000, sampleMs) });
  return {
    registry,
    trades: tradeMetrics(registry, knex),
    audit: auditMetrics(registry),
    retention: retentionMetrics(registry),
    push: pushMetrics(registry, openStreams),
    sampleMs,
    async close() {
      databaseUp.stop();
      await currentTracing()?.flush();
    },
  };
}
