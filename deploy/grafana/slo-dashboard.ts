import { scoped, type Dashboard, type Panel } from './model.ts';

/**
 * The SLO dashboard: per SLO the error budget left of the last 30 days, the burn rate the alerts
 * watch, and the error ratios over their windows. The SLIs are those of deploy/prometheus/alerts.yml
 * (relayer-slo-recording), the 30-day figures computed here from the raw series (a 30-day recording
 * rule would be evaluated every minute for one panel). The error-budget policy that these figures
 * drive is in deploy/README.md "Error-budget policy".
 */

interface Slo {
  name: string;
  sli: string;
  /** The error budget: 1 - the objective. */
  budget: number;
  /** The bad / all ratio over `window`, from raw series scoped by the dashboard's variables. */
  ratio: (window: string) => string;
}

const api = (more: string) => scoped('http_request_duration_seconds_count', `route!="/health"${more ? `, ${more}` : ''}`);
const deposits = scoped('relayer_trade_events_total', 'event="DEPOSIT_CONFIRMED"');
const goodProofs = scoped('relayer_trade_deposit_to_proof_seconds_bucket', 'le="60"');
const outcomes = (more: string) => scoped('relayer_trade_outcomes_total', more);

const SLOS: Slo[] = [
  {
    name: 'API availability (99.9 % of responses not 5xx, /health left out)', sli: 'api_availability', budget: 0.001,
    ratio: (w) => `((sum(increase(${api('status=~"5.."')}[${w}])) or vector(0)) / sum(increase(${api('')}[${w}])))`,
  },
  {
    name: 'Proof latency (99 % of deposits with their proof ready within 60 s)', sli: 'proof_latency', budget: 0.01,
    ratio: (w) => `clamp_min(1 - ((sum(increase(${goodProofs}[${w}])) or vector(0)) / sum(increase(${deposits}[${w}] offset 1m))), 0)`,
  },
  {
    name: 'Settlement (99 % of deposited trades do not expire for want of their proof)', sli: 'settlement', budget: 0.01,
    ratio: (w) => `((sum(increase(${outcomes('outcome!="settled", cause="service"')}[${w}])) or vector(0)) / sum(increase(${outcomes('')}[${w}])))`,
  },
];

const budgetLeft = (slo: Slo): Panel => ({
  title: `Budget left, 30 days: ${slo.sli}`,
  description: `${slo.name}: share of the 30-day error budget (${slo.budget * 100} % of events) not yet spent; ` +
    'below 0 the objective is missed (deploy/README.md "Error-budget policy" says what follows).',
  unit: 'percentunit',
  kind: 'stat',
  width: 8,
  queries: [{ expr: `1 - ${slo.ratio('30d')} / ${slo.budget}`, legend: 'budget left' }],
});

const burnRate = (slo: Slo): Panel => ({
  title: `Burn rate: ${slo.sli}`,
  description: `${slo.name}: error ratio divided by the budget over 1 h and 6 h (1 spends the budget in exactly 30 days; ` +
    'the page fires at 14.4 over 1 h and 6 over 6 h, the ticket at 3 over 1 d and 1 over 3 d).',
  unit: 'short',
  width: 8,
  queries: ['1h', '6h'].map((w) => ({
    expr: `max by (namespace) (relayer:slo_${slo.sli}:error_ratio_rate${w}{namespace=~"$namespace"}) / ${slo.budget}`,
    legend: `${w} {{namespace}}`,
  })),
});

export const sloDashboard: Dashboard = {
  uid: 'relayer-slo',
  title: 'Relayer / SLOs',
  description: 'The three SLOs: 30-day error budget left, burn rates against the alerts\' thresholds, and the counterparty expiries that page nobody.',
  rows: [
    { title: 'Error budget left (30 days)', panels: SLOS.map(budgetLeft) },
    { title: 'Burn rates', panels: SLOS.map(burnRate) },
    {
      title: 'Counterparties (no SLO, no page)',
      panels: [{
        title: 'Deposited trades expired by a counterparty',
        description: 'Share of deposited trades that expired with their proof ready (a Maker who never locked, an unlock nobody ' +
          'submitted), over 2 h and 1 d (alert CounterpartyExpiriesHigh above 5 %, a ticket).',
        unit: 'percentunit',
        width: 24,
        queries: ['2h', '1d'].map((w) => ({
          expr: `max by (namespace) (relayer:slo_settlement_counterparty:error_ratio_rate${w}{namespace=~"$namespace"})`,
          legend: `${w} {{namespace}}`,
        })),
      }],
    },
  ],
};
