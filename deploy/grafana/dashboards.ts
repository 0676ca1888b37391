import { scoped, type Dashboard, type Panel } from './model.ts';
import { sloDashboard } from './slo-dashboard.ts';

/**
 * The relayer's dashboards. Metrics and where they come from (deploy/README.md "Signals"):
 * `http_request_duration_seconds` (api), `relayer_trades*` (read from the database by the one
 * process leading the trade gauges' sampler; `max` across instances, never `sum`, so a former
 * leader's last copy cannot double them), `relayer_proof_backlog_*` (Temporal's, read by every
 * worker: `max`), `relayer_prover_*` (each process that proves), `temporal_*` (Temporal SDK metrics
 * of the worker and prover processes), `relayer:slo_*` (the SLO recording rules, by namespace).
 * Every series is scoped by the `namespace` and `job` variables (model.ts `scoped`).
 */

const quantiles = (metric: string, by: string, legend: (q: string) => string, filter = '', scale = ''): Panel['queries'] =>
  ['0.5', '0.95', '0.99'].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (le${by ? `, ${by}` : ''}) (rate(${scoped(`${metric}_bucket`, filter)}[5m])))${scale}`,
    legend: legend(q === '0.5' ? 'p50' : q === '0.95' ? 'p95' : 'p99'),
  }));

export const apiDashboard: Dashboard = {
  uid: 'relayer-api',
  title: 'Relayer / API',
  description: 'HTTP traffic of the api processes by route template: rate, errors, latency; the availability SLO; database reachability per process.',
  rows: [
    {
      title: 'Traffic',
      panels: [
        {
          title: 'Requests per second by route',
          description: 'All api replicas together, by route template and method.',
          unit: 'reqps',
          queries: [{ expr: `sum by (route, method) (rate(${scoped('http_request_duration_seconds_count')}[5m]))`, legend: '{{method}} {{route}}' }],
        },
        {
          title: 'Responses per second by status',
          description: 'Every response by HTTP status code.',
          unit: 'reqps',
          queries: [{ expr: `sum by (status) (rate(${scoped('http_request_duration_seconds_count')}[5m]))`, legend: '{{status}}' }],
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
            expr: `(sum by (route) (rate(${scoped(
              'http_request_duration_seconds_count',
              'status=~"5.."',
            )}[5m])) or sum by (route) (rate(${scoped('http_request_duration_seconds_count')}[5m])) * 0)`
              + ` / sum by (route) (rate(${scoped('http_request_duration_seconds_count')}[5m]))`,
            legend: '{{route}}',
          }],
        },
        {
          title: '4xx per second by route and status',
          description: 'Client errors: validation (422), auth (401/403), conflicts (409), rate limits (429).',
          unit: 'reqps',
          queries: [{
            expr: `sum by (route, status) (rate(${scoped('http_request_duration_seconds_count', 'status=~"4.."')}[5m]))`,
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
          queries: [{
            expr: `histogram_quantile(0.95, sum by (le, route) (rate(${scoped('http_request_duration_seconds_bucket')}[5m])))`,
            legend: '{{route}}',
          }],
        },
        {
          title: 'Latency, all routes',
          description: 'p50, p95 and p99 over every request.',
          unit: 's',
          queries: quantiles('http_request_duration_seconds', '', (q) => q),
        },
      ],
    },
    {
      title: 'SLO and dependencies',
      panels: [
        {
          title: 'API availability SLO: 5xx ratio against the budget',
          description: 'Error ratio of the API availability SLO (99.9 % not 5xx over 30 days) over 1 h and 6 h ' +
            '(recording rules); the budget is 0.001, the fast burn-rate alert pages at 14.4x over 1 h (alerts ' +
            'ApiAvailabilityBudgetBurnFast/Slow).',
          unit: 'percentunit',
          queries: [
            { expr: 'max by (namespace) (relayer:slo_api_availability:error_ratio_rate1h{namespace=~"$namespace"})', legend: '1 h {{namespace}}' },
            { expr: 'max by (namespace) (relayer:slo_api_availability:error_ratio_rate6h{namespace=~"$namespace"})', legend: '6 h {{namespace}}' },
          ],
        },
        {
          title: 'Database reachable, per process',
          description: "1 when the process's probe of PostgreSQL answered (every METRICS_SAMPLE_SECONDS), 0 when " +
            "not (alert DatabaseUnreachable). /metrics answers either way.",
          unit: 'short',
          queries: [{ expr: `min by (job, instance) (${scoped('relayer_db_up')})`, legend: '{{job}} {{instance}}' }],
        },
      ],
    },
    {
      title: 'RPC providers',
      panels: [
        {
          title: 'Usable providers per chain, against its quorum',
          description: 'Providers up and within RPC_MAX_HEAD_LAG_BLOCKS of the median head (the lowest count of any process), and the ' +
            "chain's rpcQuorum: below it the chain answers CHAIN_UNAVAILABLE (alert RpcChainBelowQuorum).",
          unit: 'short',
          queries: [
            { expr: `min by (chain) (${scoped('relayer_rpc_usable_providers')})`, legend: 'chain {{chain}} usable' },
            { expr: `max by (chain) (${scoped('relayer_rpc_quorum')})`, legend: 'chain {{chain}} quorum' },
          ],
        },
        {
          title: 'Provider up and head lag',
          description: 'Per provider (its host, never its URL): 1 when it answered the last head probe (alert RpcProviderDown), ' +
            'and how many blocks (ledgers) it is behind the median head of the chain\'s providers (negative: ahead).',
          unit: 'short',
          queries: [
            { expr: `max by (chain, provider) (${scoped('relayer_rpc_provider_up')})`, legend: '{{chain}} {{provider}} up' },
            { expr: `max by (chain, provider) (${scoped('relayer_rpc_head_lag_blocks')})`, legend: '{{chain}} {{provider}} lag' },
          ],
        },
        {
          title: 'RPC calls per second by provider and result, and disagreements',
          description: 'result ok: an answer; answer: a chain error such as not found; error: none usable. Disagreements: ' +
            'facts the providers answered differently (alert RpcProvidersDisagree; the log has every answer).',
          unit: 'reqps',
          queries: [
            { expr: `sum by (chain, provider, result) (rate(${scoped('relayer_rpc_requests_total')}[5m]))`, legend: '{{chain}} {{provider}} {{result}}' },
            { expr: `sum by (chain, method) (increase(${scoped('relayer_rpc_disagreements_total')}[5m]))`, legend: '{{chain}} disagree on {{method}}' },
          ],
        },
        {
          title: 'RPC latency p95 by provider',
          description: 'How long each provider takes to answer, all methods (a slow first-ranked provider is hedged after RPC_STALL_TIMEOUT_MS).',
          unit: 's',
          queries: [{
            expr: `histogram_quantile(0.95, sum by (chain, provider, le) (rate(${scoped('relayer_rpc_request_duration_seconds_bucket')}[5m])))`,
            legend: '{{chain}} {{provider}}',
          }],
        },
      ],
    },
    {
      title: 'Keeper',
      panels: [
        {
          title: "Keeper account balance per chain, and its runway at the last day's spend",
          description: 'The native balance of the relayer\'s keeper account (gas for what absent parties owe), and how many days it lasts ' +
            'at the last day\'s spend (alert KeeperBalanceRunwayLow under 3 days). Top it up before it runs dry.',
          unit: 'short',
          queries: [
            { expr: `max by (chain) (${scoped('relayer_keeper_balance')})`, legend: 'chain {{chain}} balance' },
            {
              expr: `max by (chain) (${scoped('relayer_keeper_balance')})`
                + ` / clamp_min(max by (chain) (-deriv(${scoped('relayer_keeper_balance')}[1d])) * 86400, 1e-12)`,
              legend: 'chain {{chain}} days left',
            },
          ],
        },
        {
          title: 'Keeper sends per second by action and result, and pending',
          description: 'confirmed, reverted, refused (would revert), failed, replaced (a higher fee), capped (at KEEPER_MAX_FEE_GWEI: alert ' +
            'KeeperSendStuckAtCap), expired (window closed unsent); pending: queued or waiting for finality.',
          unit: 'short',
          queries: [
            { expr: `sum by (chain, action, result) (rate(${scoped('relayer_keeper_sends_total')}[5m]))`, legend: '{{chain}} {{action}} {{result}}' },
            { expr: `max by (chain) (${scoped('relayer_keeper_pending_transactions')})`, legend: '{{chain}} pending' },
          ],
        },
        {
          title: 'Keeper delay from due to sent, mean over 15 minutes',
          description: 'Seconds from a send becoming due (a party\'s grace over, its call signed) to its first transaction signed and ' +
            'recorded (relayer_keeper_send_delay_seconds; 0 while nothing was sent).',
          unit: 's',
          queries: [{
            expr: `sum by (chain, action) (increase(${scoped('relayer_keeper_send_delay_seconds_sum')}[15m]))`
              + ` / clamp_min(sum by (chain, action) (increase(${scoped('relayer_keeper_send_delay_seconds_count')}[15m])), 1)`,
            legend: '{{chain}} {{action}}',
          }],
        },
      ],
    },
  ],
};

export const tradesDashboard: Dashboard = {
  uid: 'relayer-trades-proofs',
  title: 'Relayer / Trades and proofs',
  description: 'Trades by status and their flow, deposit-to-proof time, outcomes and SLOs, faults (lifecycle ' +
    'starts, the start outbox, stuck trades, timers armed again), proof latency and throughput, the proofs backlog ' +
    'in Temporal, prover pool and workers per pod, Temporal schedule-to-start on the proofs queue.',
  rows: [
    {
      title: 'Trades',
      panels: [
        {
          title: 'Trades by status',
          description: 'Trades in each status, read from the database every METRICS_SAMPLE_SECONDS by the process ' +
            'leading the trade gauges (never at scrape time).',
          unit: 'short',
          queries: [{ expr: `max by (status) (${scoped('relayer_trades')})`, legend: '{{status}}' }],
        },
        {
          title: 'Trade flow: lifecycle events per minute',
          description: 'Deposits, proofs, locks, unlocks and expiries applied per minute, by event.',
          unit: 'short',
          queries: [{ expr: `sum by (event) (rate(${scoped('relayer_trade_events_total')}[5m])) * 60`, legend: '{{event}}' }],
        },
        {
          title: 'Oldest open trade per status',
          description: 'How long the longest-waiting trade has been PENDING, DEPOSITED or LOCKED (a Maker may take hours of the lock window).',
          unit: 's',
          queries: [{ expr: `max by (status) (${scoped('relayer_trades_oldest_in_status_seconds')})`, legend: '{{status}}' }],
        },
        {
          title: 'Oldest deposit awaiting its proof',
          description: 'Seconds since the deposit of the longest-waiting deposited trade whose proof is not ready ' +
            '(alert TradeStuckDeposited over 10 min, for 5 min).',
          unit: 's',
          queries: [{ expr: `max(${scoped('relayer_trades_awaiting_proof_oldest_seconds')})`, legend: 'oldest' }],
        },
        {
          title: 'Trade gauges age',
          description: 'Seconds since the trade gauges were last read from PostgreSQL by their leading process ' +
            '(grows in an outage; alert TradeGaugesStale over 2 min).',
          unit: 's',
          queries: [{ expr: `min(${scoped('relayer_trade_gauges_age_seconds')})`, legend: 'age' }],
        },
        {
          title: 'Deposit confirmed to proof ready',
          description: 'From the verified deposit to its verified proof, p50/p95/p99.',
          unit: 's',
          queries: quantiles('relayer_trade_deposit_to_proof_seconds', '', (q) => q),
        },
        {
          title: 'Settlement: outcomes of deposited trades',
          description: 'Deposited trades that ended per hour: settled, expired_unlocked (no lock in the window), expired_released ' +
            '(the lock released unpaid), each expiry by cause: service (no proof ready), counterparty (the proof was ready).',
          unit: 'short',
          queries: [{ expr: `sum by (outcome, cause) (increase(${scoped('relayer_trade_outcomes_total')}[1h]))`, legend: '{{outcome}} {{cause}}' }],
        },
        {
          title: 'Proof latency and settlement SLOs: error ratios',
          description: 'Over 1 h: deposits whose proof was not ready within 60 s (budget 1 %) and deposited trades expired ' +
            'for want of their proof (budget 1 %), recording rules by namespace (alerts ProofLatencyBudgetBurn*, SettlementBudgetBurn*).',
          unit: 'percentunit',
          queries: [
            {
              expr: 'max by (namespace) (relayer:slo_proof_latency:error_ratio_rate1h{namespace=~"$namespace"})',
              legend: 'deposits without a proof in 60 s {{namespace}}',
            },
            {
              expr: 'max by (namespace) (relayer:slo_settlement:error_ratio_rate1h{namespace=~"$namespace"})',
              legend: 'expired for want of the proof {{namespace}}',
            },
          ],
        },
      ],
    },
    {
      title: 'Faults',
      panels: [
        {
          title: 'Trade starts by who and outcome',
          description: 'Lifecycle starts per minute: by the creating request, by a confirm that found none, by the ' +
            'reconciler; failed ones (alert TradeStartsFailing on the reconciler\'s).',
          unit: 'short',
          queries: [{ expr: `sum by (by, outcome) (rate(${scoped('relayer_trade_starts_total')}[5m])) * 60`, legend: '{{by}} {{outcome}}' }],
        },
        {
          title: 'Start outbox: pending and lag',
          description: 'Reservations whose lifecycle has not started (rows in trade_starts) and how long the oldest ' +
            'has waited (alert TradeStartOutboxLagging at 2 min).',
          unit: 'short',
          queries: [
            { expr: `max(${scoped('relayer_trade_start_outbox_pending')})`, legend: 'pending' },
            { expr: `max(${scoped('relayer_trade_start_outbox_lag_seconds')})`, legend: 'oldest, seconds' },
          ],
        },
        {
          title: 'Stuck trades',
          description: 'Open trades 2 min past the timer that should have moved them: PENDING past the reservation ' +
            'expiry, DEPOSITED past the lock deadline (alert TradesStuck).',
          unit: 'short',
          queries: [{ expr: `max by (status) (${scoped('relayer_trades_stuck')})`, legend: '{{status}}' }],
        },
        {
          title: 'Timers armed again (embedded runner)',
          description: "Open trades' timer jobs the embedded runner armed again per hour after pg-boss gave them up " +
            "(their retries spent in an outage of about 17 min or more) or cancelled them (alert TradeTimersRearmed).",
          unit: 'short',
          queries: [{ expr: `sum by (timer) (increase(${scoped('relayer_trade_timers_rearmed_total')}[1h]))`, legend: '{{timer}}' }],
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
          queries: [{ expr: `sum by (result) (rate(${scoped('relayer_prover_proofs_total')}[5m])) * 60`, legend: '{{result}}' }],
        },
        {
          title: 'Proof latency p95: witness, prove, verify',
          description: 'Per proof: witness calculation, Groth16 proving, verification of the produced proof.',
          unit: 's',
          queries: (['witness', 'prove', 'verify'] as const).map((step) => ({
            expr: `histogram_quantile(0.95, sum by (le) (rate(${scoped(`relayer_prover_${step}_duration_seconds_bucket`)}[5m])))`,
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
          queries: [{ expr: `sum by (instance) (rate(${scoped('relayer_prover_proofs_total', 'result="ok"')}[5m])) * 60`, legend: '{{instance}}' }],
        },
      ],
    },
    {
      title: 'Prover pods',
      panels: [
        {
          title: 'Proof backlog (Temporal)',
          description: "Proofs on Temporal's task queue proofs that no prover has taken, and how long the oldest " +
            "has waited (read from Temporal by the workers; what KEDA scales provers on; alert ProofBacklogGrowing).",
          unit: 'short',
          queries: [
            { expr: `max(${scoped('relayer_proof_backlog_tasks', 'task_queue="proofs"')})`, legend: 'waiting' },
            { expr: `max(${scoped('relayer_proof_backlog_oldest_seconds', 'task_queue="proofs"')})`, legend: 'oldest, seconds' },
          ],
        },
        {
          title: 'Pool queue depth per prover pod',
          description: "Proofs waiting for a free thread inside each process's pool: near 0 on Temporal (a prover " +
            "takes no more than its threads), the backlog is Temporal's (panel above).",
          unit: 'short',
          queries: [{ expr: `sum by (instance) (${scoped('relayer_prover_queue_depth')})`, legend: '{{instance}}' }],
        },
        {
          title: 'Busy workers per prover pod',
          description: 'Worker threads proving right now in each process (at most PROVER_POOL_SIZE).',
          unit: 'short',
          queries: [{ expr: `sum by (instance) (${scoped('relayer_prover_busy_workers')})`, legend: '{{instance}}' }],
        },
      ],
    },
    {
      title: 'Temporal',
      panels: [
        {
          title: 'Schedule-to-start on task queue proofs',
          description: 'How long generateProof activities wait before a prover starts them (Temporal SDK metric, ' +
            'recorded in ms; alert ProofScheduleToStartSlow at p95 > 1 s).',
          unit: 's',
          queries: quantiles('temporal_activity_schedule_to_start_latency', '', (q) => q, 'task_queue="proofs"', ' / 1000'),
        },
      ],
    },
  ],
};

export const dashboards: Dashboard[] = [apiDashboard, tradesDashboard, sloDashboard];
