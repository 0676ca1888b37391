import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runTool } from '../../test/support/deploy-tools.ts';

/** promtool over the compose stack's Prometheus config and the alert rules, and their unit tests. */

const here = new URL('.', import.meta.url).pathname;
const alerts: { alert: string; expr: string; annotations: { runbook: string } }[] = parse(readFileSync(`${here}alerts.yml`, 'utf8')).groups.flatMap((g: any) => g.rules);
const unitTests: any[] = parse(readFileSync(`${here}alerts.test.yml`, 'utf8')).tests;

describe('Prometheus configuration and alert rules', () => {
  it('promtool accepts the scrape config (with its rule file) and the rules', () => {
    const config = runTool('promtool', ['check', 'config', 'prometheus.yml'], here);
    expect(config.output).toContain('SUCCESS');
    expect(config.status).toBe(0);
    const rules = runTool('promtool', ['check', 'rules', 'alerts.yml'], here);
    expect(rules.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(rules.status).toBe(0);
  });

  it('every alert passes its promtool unit tests', () => {
    const { status, output } = runTool('promtool', ['test', 'rules', 'alerts.test.yml'], here);
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
  });

  it('every alert has a unit test that sees it fire and one that sees it stay quiet', () => {
    for (const { alert } of alerts) {
      const cases = unitTests.flatMap((t) => t.alert_rule_test ?? []).filter((c: any) => c.alertname === alert);
      expect(cases.some((c: any) => c.exp_alerts.length > 0), `${alert} fires in a test`).toBe(true);
      expect(cases.some((c: any) => c.exp_alerts.length === 0), `${alert} stays quiet in a test`).toBe(true);
    }
  });

  it('every alert links to its section of deploy/README.md', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const { alert, annotations } of alerts) {
      expect(annotations.runbook).toBe(`deploy/README.md#${alert.toLowerCase()}`);
      expect(readme, alert).toMatch(new RegExp(`^### ${alert}$`, 'm'));
    }
  });
});
