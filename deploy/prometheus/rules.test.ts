import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runTool } from '../../test/support/deploy-tools.ts';
import { rebase } from './build.ts';
import { RUNBOOK_BASE, runbookUrl } from './runbooks.ts';

/** promtool over the compose stack's Prometheus config and the alert rules, and their unit tests. */

const here = new URL('.', import.meta.url).pathname;
type Rule = { alert?: string; record?: string; expr: string; for?: string; annotations?: { runbook_url?: string; runbook?: string } };
const groups: { name: string; rules: Rule[] }[] = parse(readFileSync(`${here}alerts.yml`, 'utf8')).groups;
const rules = groups.flatMap((g) => g.rules);
const alerts = rules.filter((r): r is Rule & { alert: string } => r.alert !== undefined);
const recordings = rules.filter((r): r is Rule & { record: string } => r.record !== undefined);
/** The unit tests: the 1-minute cases, and those running a day or more evaluated every 5 minutes. */
const TEST_FILES = ['alerts.test.yml', 'alerts.long.test.yml'];
const unitTests: any[] = TEST_FILES.flatMap((file) => parse(readFileSync(`${here}${file}`, 'utf8')).tests);
/** The relayer's own jobs (deploy/prometheus/prometheus.yml, the k8s PodMonitor). */
const OWN_JOBS = ['relayer-api', 'relayer-worker', 'relayer-prover'];

describe('Prometheus configuration and alert rules', () => {
  it('promtool accepts the scrape config (with its rule file) and the rules', () => {
    const config = runTool('promtool', ['check', 'config', 'prometheus.yml'], here);
    expect(config.output).toContain('SUCCESS');
    expect(config.status).toBe(0);
    const checked = runTool('promtool', ['check', 'rules', 'alerts.yml'], here);
    expect(checked.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(checked.status).toBe(0);
  });

  it('every alert passes its promtool unit tests', () => {
    const { status, output } = runTool('promtool', ['test', 'rules', ...TEST_FILES], here);
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
    // promtool evaluates every rule at each file's evaluation interval up to each case's last eval
    // time: the day-long cases, every 5 minutes, are most of it.
  }, 300_000);

  it('every alert has a unit test that sees it fire and one that sees it stay quiet', () => {
    for (const { alert } of alerts) {
      const cases = unitTests.flatMap((t) => t.alert_rule_test ?? []).filter((c: any) => c.alertname === alert);
      expect(cases.some((c: any) => c.exp_alerts.length > 0), `${alert} fires in a test`).toBe(true);
      expect(cases.some((c: any) => c.exp_alerts.length === 0), `${alert} stays quiet in a test`).toBe(true);
    }
  });

  it('every alert and recording rule reads only the relayer\'s own jobs, and every alert has a quiet test with another job\'s series', () => {
    for (const rule of [...alerts, ...recordings]) {
      const name = rule.alert ?? rule.record;
      // Every metric selector in the expression names a job (recording rules' outputs excepted).
      const selectors = [...rule.expr.matchAll(/\b([a-z_][a-z0-9_]*)(\{[^}]*\})?(?=\s*(\[|\)|>|<|=|!|\s|$|\bor\b|\band\b))/g)]
        .filter(([, metric]) => /_(total|seconds|count|bucket|sum|tasks|up|drift|pending)$|^up$|^relayer_trades?(_|$)|^relayer_db_up$/.test(metric!) && !metric!.startsWith('relayer:'));
      for (const [text, , labels] of selectors) {
        expect(labels ?? '', `${name}: ${text}`).toMatch(/job=~?"(relayer-(api|worker|prover)\|?)+"/);
      }
      for (const job of [...rule.expr.matchAll(/job=~?"([^"]+)"/g)].flatMap((m) => m[1]!.split('|'))) expect(OWN_JOBS, `${name}: job ${job}`).toContain(job);
    }
    for (const { alert } of alerts) {
      const quietWithOthers = unitTests.some((t) => (t.alert_rule_test ?? []).some((c: any) => c.alertname === alert && c.exp_alerts.length === 0)
        && (t.input_series as { series: string }[]).some((s) => /job="/.test(s.series) && !/job="relayer-/.test(s.series)));
      expect(quietWithOthers, `${alert} stays quiet in a test that feeds another service's series`).toBe(true);
    }
  });

  it('every alert links to its section of deploy/README.md by an absolute runbook_url on one base', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(RUNBOOK_BASE).toMatch(/^https:\/\/\S+$/);
    for (const { alert, annotations } of alerts) {
      expect(annotations?.runbook_url, alert).toBe(runbookUrl(alert));
      expect(annotations?.runbook, alert).toBeUndefined();
      expect(readme, alert).toMatch(new RegExp(`^### ${alert}$`, 'm'));
    }
    // Moving the base (npm run rules:build -- --runbook-base) moves every URL and nothing else.
    const text = readFileSync(`${here}alerts.yml`, 'utf8');
    const moved = parse(rebase(text, RUNBOOK_BASE, 'https://runbooks.example.org/relayer')).groups.flatMap((g: any) => g.rules);
    for (const rule of moved.filter((r: Rule) => r.alert)) expect(rule.annotations.runbook_url).toBe(runbookUrl(rule.alert, 'https://runbooks.example.org/relayer'));
    expect(rebase(text, RUNBOOK_BASE, 'https://runbooks.example.org/relayer').replaceAll('https://runbooks.example.org/relayer', RUNBOOK_BASE)).toBe(text);
  });

  it('the SLO burn-rate alerts follow the SRE Workbook: 14.4x over 1h/5m and 6x over 6h/30m page, 3x over 1d/2h and 1x over 3d/6h open a ticket', () => {
    const slos = ['api_availability', 'proof_latency', 'settlement'];
    for (const sli of slos) {
      for (const window of ['5m', '30m', '1h', '2h', '6h', '1d', '3d']) {
        const rule = recordings.find((r) => r.record === `relayer:slo_${sli}:error_ratio_rate${window}`);
        expect(rule, `${sli} ${window}`).toBeDefined();
        expect(rule!.expr, `${sli} ${window}`).toContain(`[${window}]`);
        expect(rule!.expr, `${sli} ${window}`).toMatch(/sum by \(namespace\)/);
      }
    }
    const fast = alerts.filter((a) => a.alert.endsWith('BudgetBurnFast'));
    const slow = alerts.filter((a) => a.alert.endsWith('BudgetBurnSlow'));
    expect(fast).toHaveLength(3);
    expect(slow).toHaveLength(3);
    for (const a of fast) expect(a.expr.replace(/\s+/g, ' ')).toMatch(/rate1h > \(14\.4 \* [\d.]+\) and \S+rate5m > \(14\.4 \* [\d.]+\)\) or \(\S+rate6h > \(6 \* [\d.]+\) and \S+rate30m > \(6 \* [\d.]+\)/);
    for (const a of slow) expect(a.expr.replace(/\s+/g, ' ')).toMatch(/rate1d > \(3 \* [\d.]+\) and \S+rate2h > \(3 \* [\d.]+\)\) or \(\S+rate3d > [\d.]+ and \S+rate6h > [\d.]+/);
  });
});
