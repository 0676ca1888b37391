import type { Dashboard, Panel } from './model.ts';

/**
 * The relayer's dashboards. Metrics and where they come from (deploy/README.md "Signals"):
 * `http_request_duration_seconds` (api), `relayer_trades*` (read from the database by every
 * process that serves them, hence `max`, never `sum`, across instances), `relayer_prover_*` (each
 * process that proves), `temporal_*` (Temporal SDK metrics of the worker and prover processes).
 */

const quantiles = (metric: string, by: string, legend: (q: string) => string, filter = '', scale = ''): Panel['queries'] =>
  ['0.5', '0.95', '0.99'].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (le${by ? `, ${by}` : ''}) (rate(${metric}_bucket${filter}[5m])))${scale}`,
    legend: legend(q === '0.5' ? 'p50' : q === '0.95' ? 'p95' : 'p99'),
  }));

export const apiDashboard: Dashboard = {
  uid: 'relayer-api',
  title: 'Relayer / API',
  description: 'HTTP traffic of the api processes by route template: rate, errors, latency.',
  rows: [
    {
      title: 'Traffic',
      panels: [
        {
          title: 'Requests per second by route',
          description: 'All api replicas together, by route template and method.',
          unit: 'reqps',
          queries: [{ expr: 'sum by (route, method) (rate(http_request_duration_seconds_count[5m]))', legend: '{{method}} {{route}}' }],
        },
        {
          title: 'Responses per second by status',
          description: 'Every response by HTTP status code.',
          unit: 'reqps',
          queries: [{ expr: 'sum by (status) (rate(http_request_duration_seconds_count[5m]))', legend: '{{status}}' }],
        },
      ],
    },
    {
      title: 'Errors',
      panels: [
        {
          title: '5xx share by route',
          description: 'Share of each route\'s responses that are server errors (alert HttpServerErrors watches the total).',
          unit: 'percentunit',
          queries: [{
            expr: '(sum by (route) (rate(http_request_duration_seconds_count{status=~"5.."}[5m])) or sum by (route) (rate(http_request_duration_seconds_count[5m])) * 0)'
              + ' / sum by (route) (rate(http_request_duration_seconds_count[5m]))',
            legend: '{{route}}',
          }],
        },
        {
          title: '4xx per second by route and status',
          description: 'Client errors: validation (422), auth (401/403), conflicts (409), rate limits (429).',
          unit: 'reqps',
          queries: [{
            expr: 'sum by (route, status) (rate(http_request_duration_seconds_count{status=~"4.."}[5m]))',
            legend: '{{status}} {{route}}',
          }],
        },
      ],
    },
    {
      title: 'Latency',
      panels: [
        {
          title: 'Latency p95 by route',
          description: 'Server-side duration, 95th percentile, per route template.',
          unit: 's',
          queries: [{ expr: 'histogram_quantile(0.95, sum by (le, route) (rate(http_request_duration_seconds_bucket[5m])))', legend: '{{route}}' }],
        },
        {
          title: 'Latency, all routes',
          description: 'p50, p95 and p99 over every request.',
          unit: 's',
          queries: quantiles('http_request_duration_seconds', '', (q) => q),
        },
      ],
    },
  ],
};

export const tradesDashboard: Dashboard = {
  uid: 'relayer-trades-proofs',
  title: 'Relayer / Trades and proofs',
  description: 'Trades by status and their flow, deposit-to-proof time, faults (lifecycle starts, the start outbox, stuck trades, timers armed again), proof latency and throughput, prover queue and workers per pod, Temporal schedule-to-start on the proofs queue.',
  rows: [
    {
      title: 'Trades',
      panels: [
        {
          title: 'Trades by status',
          description: 'Trades in each status, read from the database at scrape time.',
          unit: 'short',
          queries: [{ expr: 'max by (status) (relayer_trades)', legend: '{{status}}' }],
        },
        {
          title: 'Trade flow: lifecycle events per minute',
          description: 'Deposits, proofs, locks, unlocks and expiries applied per minute, by event.',
          unit: 'short',
          queries: [{ expr: 'sum by (event) (rate(relayer_trade_events_total[5m])) * 60', legend: '{{event}}' }],
        },
        {
          title: 'Oldest open trade per status',
          description: 'How long the longest-waiting trade has been PENDING, DEPOSITED or LOCKED (alert TradeStuckDeposited at 10 min).',
          unit: 's',
          queries: [{ expr: 'max by (status) (relayer_trades_oldest_in_status_seconds)', legend: '{{status}}' }],
        },
        {
          title: 'Deposit confirmed to proof ready',
          description: 'From the verified deposit to its verified proof, p50/p95/p99.',
          unit: 's',
          queries: quantiles('relayer_trade_deposit_to_proof_seconds', '', (q) => q),
        },
      ],
    },
    {
      title: 'Faults',
      panels: [
        {
          title: 'Trade starts by who and outcome',
          description: 'Lifecycle starts per minute: by the creating request, by a confirm that found none, by the reconciler; failed ones (alert TradeStartsFailing on the reconciler\'s).',
          unit: 'short',
          queries: [{ expr: 'sum by (by, outcome) (rate(relayer_trade_starts_total[5m])) * 60', legend: '{{by}} {{outcome}}' }],
        },
        {
          title: 'Start outbox: pending and lag',
          description: 'Reservations whose lifecycle has not started (rows in trade_starts) and how long the oldest has waited (alert TradeStartOutboxLagging at 2 min).',
          unit: 'short',
          queries: [
            { expr: 'max(relayer_trade_start_outbox_pending)', legend: 'pending' },
            { expr: 'max(relayer_trade_start_outbox_lag_seconds)', legend: 'oldest, seconds' },
          ],
        },
        {
          title: 'Stuck trades',
          description: 'Open trades 2 min past the timer that should have moved them: PENDING past the reservation expiry, DEPOSITED past the lock deadline (alert TradesStuck).',
          unit: 'short',
          queries: [{ expr: 'max by (status) (relayer_trades_stuck)', legend: '{{status}}' }],
        },
        {
          title: 'Timers armed again (embedded runner)',
          description: "Open trades' timer jobs the embedded runner armed again per hour after pg-boss gave them up (their retries spent in an outage of about 17 min or more) or cancelled them (alert TradeTimersRearmed).",
          unit: 'short',
          queries: [{ expr: 'sum by (timer) (increase(relayer_trade_timers_rearmed_total[1h]))', legend: '{{timer}}' }],
        },
      ],
    },
    {
      title: 'Proofs',
      panels: [
        {
          title: 'Proofs per minute by result',
          description: 'Proof requests finished per minute: ok, invalid_input, verification_failed, busy, closed, error.',
          unit: 'short',
          queries: [{ expr: 'sum by (result) (rate(relayer_prover_proofs_total[5m])) * 60', legend: '{{result}}' }],
        },
        {
          title: 'Proof latency p95: witness, prove, verify',
          description: 'Per proof: witness calculation, Groth16 proving, verification of the produced proof.',
          unit: 's',
          queries: (['witness', 'prove', 'verify'] as const).map((step) => ({
            expr: `histogram_quantile(0.95, sum by (le) (rate(relayer_prover_${step}_duration_seconds_bucket[5m])))`,
            legend: step,
          })),
        },
        {
          title: 'Proving time p50/p95/p99',
          description: 'Groth16 proving alone.',
          unit: 's',
          queries: quantiles('relayer_prover_prove_duration_seconds', '', (q) => q),
        },
        {
          title: 'Proofs per minute per prover pod',
          description: 'Successful proofs of each prover process: how Temporal spreads the proofs queue.',
          unit: 'short',
          queries: [{ expr: 'sum by (instance) (rate(relayer_prover_proofs_total{result="ok"}[5m])) * 60', legend: '{{instance}}' }],
        },
      ],
    },
    {
      title: 'Prover pods',
      panels: [
        {
          title: 'Queue depth per prover pod',
          description: 'Proofs waiting for a free worker thread in each process (alert ProofBacklogGrowing watches the sum).',
          unit: 'short',
          queries: [{ expr: 'sum by (instance) (relayer_prover_queue_depth)', legend: '{{instance}}' }],
        },
        {
          title: 'Busy workers per prover pod',
          description: 'Worker threads proving right now in each process (at most PROVER_POOL_SIZE).',
          unit: 'short',
          queries: [{ expr: 'sum by (instance) (relayer_prover_busy_workers)', legend: '{{instance}}' }],
        },
      ],
    },
    {
      title: 'Temporal',
      panels: [
        {
          title: 'Schedule-to-start on task queue proofs',
          description: 'How long generateProof activities wait before a prover starts them (Temporal SDK metric, recorded in ms; alert ProofScheduleToStartSlow at p95 > 1 s).',
          unit: 's',
          queries: quantiles('temporal_activity_schedule_to_start_latency', '', (q) => q, '{task_queue="proofs"}', ' / 1000'),
        },
      ],
    },
  ],
};

export const dashboards: Dashboard[] = [apiDashboard, tradesDashboard];
