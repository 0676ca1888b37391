import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { RUNBOOK_BASE } from './runbooks.ts';

/**
 * `npm run rules:build [-- --runbook-base <url>]`: writes the PrometheusRule of deploy/k8s/base
 * from alerts.yml (the one source of the rules; a test keeps them equal), after moving every
 * runbook_url to `<url>` when given (alerts.yml, alerts.test.yml, alerts.long.test.yml, runbooks.ts).
 */

const here = (file: string) => new URL(file, import.meta.url);
export const PROMETHEUS_RULE_FILE = here('../k8s/base/prometheusrule.yaml');

/** The committed text of the PrometheusRule for the rules in `alertsYaml`. */
export function prometheusRuleText(alertsYaml: string): string {
  const { groups } = parse(alertsYaml);
  const rule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'relayer', labels: { 'app.kubernetes.io/name': 'relayer', 'app.kubernetes.io/component': 'monitoring' } },
    spec: { groups },
  };
  return `# Generated from deploy/prometheus/alerts.yml by \`npm run rules:build\`: edit that file, not this one.\n${stringify(rule, { lineWidth: 0 })}`;
}

/** `text` with every `base` of a runbook URL replaced by `next`. */
export const rebase = (text: string, base: string, next: string) => text.split(`${base}#`).join(`${next}#`);

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--runbook-base');
  const next = at > 0 ? process.argv[at + 1] : undefined;
  if (next !== undefined) {
    if (!/^https?:\/\/\S+$/.test(next) || next.includes('#')) throw new Error(`--runbook-base must be an absolute http(s) URL without a fragment, not ${next}`);
    for (const file of ['./alerts.yml', './alerts.test.yml', './alerts.long.test.yml']) {
      writeFileSync(here(file), rebase(readFileSync(here(file), 'utf8'), RUNBOOK_BASE, next));
    }
    const runbooks = here('./runbooks.ts');
    writeFileSync(runbooks, readFileSync(runbooks, 'utf8').replace(`'${RUNBOOK_BASE}'`, `'${next}'`));
    console.log(`runbook URLs now on ${next}`);
  }
  writeFileSync(PROMETHEUS_RULE_FILE, prometheusRuleText(readFileSync(here('./alerts.yml'), 'utf8')));
  console.log('wrote deploy/k8s/base/prometheusrule.yaml');
}
