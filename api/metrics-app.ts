import express, { type Express } from 'express';
import type { Registry } from 'prom-client';
import { errorBody } from './errors.ts';
import { metricsHandler } from './routes/system.ts';

/**
 * The app of the metrics listener (METRICS_PORT): GET /metrics and GET /live, nothing else, so the
 * port can be left to the monitoring network while the API port is public.
 *
 * /live is the liveness probe: 200 whenever the event loop turns, touching no dependency. /health
 * (API port) checks PostgreSQL and is the readiness probe; a liveness probe on it would restart
 * every API pod at once during a database failover, which a restart cannot fix.
 */
export function createMetricsApp(registry: Registry): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsHandler(registry));
  app.get('/live', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use((req, res) => {
    res.status(404).json(errorBody(404, `no route for ${req.method} ${req.path}`, 'ROUTE_NOT_FOUND'));
  });
  return app;
}
