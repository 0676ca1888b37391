/**
 * Where the alerts' `runbook_url`s point: this base, then `#<alert name in lower case>`, the
 * alert's section of deploy/README.md ("Alerts"). Absolute, so a page opens from Alertmanager,
 * PagerDuty or Slack. A fork or mirror sets its own with
 * `npm run rules:build -- --runbook-base <url>` (deploy/prometheus/build.ts), which rewrites it
 * here, in alerts.yml, in alerts.test.yml and in the PrometheusRule.
 */
export const RUNBOOK_BASE = 'https://github.com/proofbridge/relayer/blob/main/deploy/README.md';

/** The runbook URL of `alert` on `base`. */
export const runbookUrl = (alert: string, base = RUNBOOK_BASE) => `${base}#${alert.toLowerCase()}`;
