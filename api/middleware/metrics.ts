import type { RequestHandler } from 'express';
import { Histogram, type Registry } from 'prom-client';

/**
 * Records every request's duration labelled by route template (`/v1/ads/:id`, never the raw
 * path, so label cardinality stays bounded), method and status.
 */
export function httpMetrics(registry: Registry): RequestHandler {
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return (req, res, next) => {
    // performance.now and one observe: startTimer's hrtime pairs and merged label objects cost more per request.
    const started = performance.now();
    res.once('finish', () => {
      const mountPath = (res.locals.mountPath as string | undefined) ?? req.baseUrl;
      const route = req.route?.path ? `${mountPath}${req.route.path}` : 'unmatched';
      duration.observe({ route, method: req.method, status: String(res.statusCode) }, (performance.now() - started) / 1000);
    });
    next();
  };
}

/**
 * Remembers where a router is mounted: when a handler throws, Express resets `req.baseUrl`
 * before the response finishes, and the metric would lose its `/v1` prefix.
 */
export const rememberMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};
