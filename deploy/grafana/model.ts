/**
 * A small typed model of the Grafana dashboards we provision (deploy/grafana/dashboards/*.json are
 * generated from it by `npm run dashboards:build`; a test keeps the committed JSON equal to it).
 * Every query is plain PromQL with fixed ranges (no Grafana macros but the two variables below), so
 * the local stack test can evaluate each one against a real Prometheus with the variables at "All".
 */

/**
 * The dashboards' variables: the Kubernetes namespace (one deployment of the relayer; compose has
 * none) and the relayer's jobs (relayer-api, relayer-worker, relayer-prover, as the scrape config
 * and the PodMonitor name them). "All" is `.*` and the three jobs: never another service's series.
 */
export const VARIABLES = {
  namespace: { query: 'label_values(relayer_db_up, namespace)', all: '.*' },
  job: { query: 'label_values(relayer_db_up{namespace=~"$namespace"}, job)', all: 'relayer-api|relayer-worker|relayer-prover' },
} as const;

/** `metric{namespace=~"$namespace", job=~"$job"[, more]}`: every series a panel reads is scoped so. */
export const scoped = (metric: string, more = '') => `${metric}{namespace=~"$namespace", job=~"$job"${more ? `, ${more}` : ''}}`;

/** `expr` with each variable at its "All" value: what Grafana sends when nothing is picked. */
export const atAll = (expr: string) => expr.replaceAll('$namespace', VARIABLES.namespace.all).replaceAll('$job', VARIABLES.job.all);

export interface Query {
  expr: string;
  /** Grafana legend template, e.g. `{{route}}`. */
  legend: string;
}

export interface Panel {
  title: string;
  description: string;
  /** Grafana unit id: `reqps`, `s`, `percentunit`, `short`, ... */
  unit: string;
  queries: Query[];
  /** `timeseries` (default) or `stat`. */
  kind?: 'timeseries' | 'stat';
  /** Width in grid columns out of 24 (default 12). */
  width?: number;
}

export interface Row {
  title: string;
  panels: Panel[];
}

export interface Dashboard {
  uid: string;
  title: string;
  description: string;
  rows: Row[];
}

const DATASOURCE = { type: 'prometheus', uid: 'prometheus' };
const PANEL_HEIGHT = 8;

/** The Grafana JSON model of `dashboard` (schema 39), laid out row by row, panels left to right. */
export function toGrafanaJson(dashboard: Dashboard): object {
  const panels: object[] = [];
  let id = 1;
  let y = 0;
  for (const row of dashboard.rows) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { x: 0, y, w: 24, h: 1 }, panels: [] });
    y += 1;
    let x = 0;
    for (const panel of row.panels) {
      const w = panel.width ?? 12;
      if (x + w > 24) {
        x = 0;
        y += PANEL_HEIGHT;
      }
      panels.push({
        id: id++,
        type: panel.kind ?? 'timeseries',
        title: panel.title,
        description: panel.description,
        datasource: DATASOURCE,
        gridPos: { x, y, w, h: PANEL_HEIGHT },
        fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
        options: panel.kind === 'stat'
          ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'area' }
          : { legend: { displayMode: 'table', placement: 'bottom', calcs: ['mean', 'max', 'lastNotNull'] }, tooltip: { mode: 'multi', sort: 'desc' } },
        targets: panel.queries.map((query, i) => ({
          refId: String.fromCharCode(65 + i),
          datasource: DATASOURCE,
          expr: query.expr,
          legendFormat: query.legend,
          range: true,
        })),
      });
      x += w;
    }
    y += PANEL_HEIGHT;
  }
  return {
    uid: dashboard.uid,
    title: dashboard.title,
    description: dashboard.description,
    tags: ['relayer'],
    editable: false,
    schemaVersion: 39,
    timezone: 'utc',
    refresh: '30s',
    time: { from: 'now-3h', to: 'now' },
    templating: {
      list: Object.entries(VARIABLES).map(([name, variable]) => ({
        name, label: name, type: 'query', datasource: DATASOURCE,
        query: { query: variable.query, refId: `${name}-variable` }, definition: variable.query,
        includeAll: true, allValue: variable.all, multi: true, refresh: 2, sort: 1,
        current: { selected: true, text: ['All'], value: ['$__all'] },
      })),
    },
    annotations: { list: [] },
    panels,
  };
}

/** Every PromQL expression of `dashboard`, with where it sits: `expr` with the variables at "All", `raw` as written. */
export function dashboardQueries(dashboard: Dashboard): { where: string; expr: string; raw: string }[] {
  return dashboard.rows.flatMap((row) => row.panels.flatMap((panel) =>
    panel.queries.map((query) => ({ where: `${dashboard.uid} / ${panel.title} / ${query.legend}`, expr: atAll(query.expr), raw: query.expr }))));
}
