import { writeFileSync } from 'node:fs';
import { dashboards } from './dashboards.ts';
import { toGrafanaJson } from './model.ts';

/** Where `npm run dashboards:build` writes each dashboard (Grafana provisions them from there). */
export const dashboardFile = (uid: string) => new URL(`./dashboards/${uid}.json`, import.meta.url);

/** The committed text of a dashboard: its Grafana JSON, two-space indented, newline-terminated. */
export const dashboardText = (dashboard: (typeof dashboards)[number]) => `${JSON.stringify(toGrafanaJson(dashboard), null, 2)}\n`;

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const dashboard of dashboards) {
    writeFileSync(dashboardFile(dashboard.uid), dashboardText(dashboard));
    console.log(`wrote deploy/grafana/dashboards/${dashboard.uid}.json`);
  }
}
