import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { LeaderLock } from '../../db/leader-lock.ts';
import { oldestDepositAwaitingProof, oldestOpenTradeAges, stuckTradeCounts } from '../../db/repositories/trade-ages.ts';
import { tradeStartBacklog } from '../../db/repositories/trade-starts.ts';
import { tradeCountsByStatus } from '../../db/repositories/trade-stats.ts';
import { systemClock, type Clock } from '../clock.ts';

/** A PENDING or DEPOSITED trade this long past the timer that should have moved it counts as stuck. */
export const STUCK_GRACE_SECONDS = 120;

/** Names of the gauges the sampler serves (its leader only), for tests and the README. */
export const TRADE_GAUGE_NAMES = [
  'relayer_trades', 'relayer_trades_oldest_in_status_seconds', 'relayer_trades_awaiting_proof_oldest_seconds',
  'relayer_trade_start_outbox_pending', 'relayer_trade_start_outbox_lag_seconds', 'relayer_trades_stuck', 'relayer_trade_gauges_age_seconds',
] as const;

/** One reading of the trade tables. */
interface TradeSample {
  byStatus: Array<{ status: string; count: number }>;
  oldest: Record<string, number>;
  awaitingProof: number;
  backlog: { pending: number; oldestSeconds: number };
  stuck: Record<string, number>;
}

async function readTrades(knex: Knex): Promise<TradeSample> {
  return {
    byStatus: await tradeCountsByStatus(knex),
    oldest: await oldestOpenTradeAges(knex),
    awaitingProof: await oldestDepositAwaitingProof(knex),
    backlog: await tradeStartBacklog(knex),
    stuck: await stuckTradeCounts(knex, STUCK_GRACE_SECONDS),
  };
}

export interface TradeGaugeSampler {
  /** One round: lead or not, and the leader reads the tables. Resolves with the role it found (tests call it directly). */
  sample(): Promise<'leading' | 'following' | 'unreachable' | 'failed'>;
  /** Samples now and every `intervalMs` (rounds never overlap). */
  start(): void;
  /** Stops sampling and gives up the role. */
  stop(): Promise<void>;
}

/**
 * The trade gauges (trades by status, oldest trade per open status, oldest deposit awaiting its
 * proof, the start outbox, stuck trades), read from PostgreSQL on a schedule by the one process
 * that holds `lock`, and served from memory: a scrape never touches the database, so /metrics
 * answers during an outage with the last values and `relayer_trade_gauges_age_seconds` saying how
 * old they are. A process that does not lead registers none of them (so no stale copy of another
 * process's figures is ever served), and drops them when it finds another process leading.
 */
export function tradeGaugeSampler(
  options: { registry: Registry; knex: Knex; lock: LeaderLock; intervalMs: number; logger: Logger; now?: Clock },
): TradeGaugeSampler {
  const { registry, knex, lock, logger } = options;
  const now = options.now ?? systemClock;
  let sampledAt: number | undefined;
  const gauges = [
    new Gauge({ name: 'relayer_trades', help: 'Trades by status', labelNames: ['status'] as const, registers: [] }),
    new Gauge({
      name: 'relayer_trades_oldest_in_status_seconds', registers: [], labelNames: ['status'] as const,
      help: 'Seconds the longest-waiting open trade has been in its status (PENDING, DEPOSITED, LOCKED; 0 when none)',
    }),
    new Gauge({
      name: 'relayer_trades_awaiting_proof_oldest_seconds', registers: [],
      help: 'Seconds since the deposit of the longest-waiting deposited trade whose proof is not ready (0 when none)',
    }),
    new Gauge({
      name: 'relayer_trade_start_outbox_pending',
      registers: [],
      help: 'Trades reserved whose lifecycle the orchestrator has not confirmed starting (rows in trade_starts)',
    }),
    new Gauge({
      name: 'relayer_trade_start_outbox_lag_seconds',
      registers: [],
      help: 'Age of the oldest pending trade start (0 when none): how far the reconciler is behind',
    }),
    new Gauge({
      name: 'relayer_trades_stuck', registers: [], labelNames: ['status'] as const,
      help: `Open trades a timer should have moved ${STUCK_GRACE_SECONDS} s ago: PENDING past the reservation's expiry, DEPOSITED past the lock deadline`,
    }),
    new Gauge({
      name: 'relayer_trade_gauges_age_seconds', registers: [],
      help: 'Seconds since the trade gauges were last read from PostgreSQL (grows while the database is out)',
      collect() {
        if (sampledAt !== undefined) this.set((now() - sampledAt) / 1000);
      },
    }),
  ] as const;
  const [byStatus, oldest, awaitingProof, outboxPending, outboxLag, stuck] = gauges;
  let attached = false;
  const attach = () => {
    if (attached) return;
    for (const gauge of gauges) registry.registerMetric(gauge);
    attached = true;
  };
  const detach = () => {
    if (!attached) return;
    for (const name of TRADE_GAUGE_NAMES) registry.removeSingleMetric(name);
    attached = false;
    sampledAt = undefined;
  };
  const sample: TradeGaugeSampler['sample'] = async () => {
    const role = await lock.tryLead();
    // Unreachable: keep serving what was read last (if this process led), its age growing.
    if (role === 'unreachable') return role;
    if (role === 'following') {
      detach();
      return role;
    }
    let read: TradeSample;
    try {
      read = await readTrades(knex);
    } catch (error) {
      logger.debug({ err: error }, 'trade gauges: could not read the trade tables; serving the last values');
      return 'failed';
    }
    byStatus.reset();
    for (const { status, count } of read.byStatus) byStatus.set({ status }, count);
    for (const [status, age] of Object.entries(read.oldest)) oldest.set({ status }, age);
    awaitingProof.set(read.awaitingProof);
    outboxPending.set(read.backlog.pending);
    outboxLag.set(read.backlog.oldestSeconds);
    for (const [status, n] of Object.entries(read.stuck)) stuck.set({ status }, n);
    sampledAt = now();
    attach();
    return role;
  };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = false;
  const loop = () => {
    running = sample().catch((error) => logger.warn({ err: error }, 'trade gauges: sampling failed')).finally(() => {
      if (!stopped) timer = setTimeout(loop, options.intervalMs).unref();
    });
  };
  return {
    sample,
    start() {
      if (running || stopped) return;
      loop();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      detach();
      await lock.release();
    },
  };
}
