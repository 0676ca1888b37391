import express, { type Express } from 'express';
import type { Registry } from 'prom-client';
import { errorBody } from './errors.ts';
import { metricsHandler } from './routes/system.ts';

/**
 * The app of the metrics listener (METRICS_PORT): GET /metrics and nothing else, so the port can be
 * left to the monitoring network while the API port is public.
 */
export function createMetricsApp(registry: Registry): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', metricsHandler(registry));
  app.use((req, res) => {
    res.status(404).json(errorBody(404, `no route for ${req.method} ${req.path}`));
  });
  return app;
}
