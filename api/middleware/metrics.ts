import type { RequestHandler, Response } from 'express';
import { Histogram, type Registry } from 'prom-client';

/** Where `httpMetrics` keeps a response's start, in `res.locals`. */
const STARTED = 'httpMetricsStartedAt';

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
  /** One listener for every response, not a closure each: `this` is the response, its start kept on it. */
  function record(this: Response): void {
    const { req } = this;
    const mountPath = (this.locals.mountPath as string | undefined) ?? req.baseUrl;
    const route = req.route?.path ? `${mountPath}${req.route.path}` : 'unmatched';
    duration.observe({ route, method: req.method, status: String(this.statusCode) }, (performance.now() - (this.locals[STARTED] as number)) / 1000);
  }
  return (_req, res, next) => {
    // performance.now and one observe: startTimer's hrtime pairs and merged label objects cost more per request.
    res.locals[STARTED] = performance.now();
    // `on`, not `once`: a response finishes once, and `once` wraps the listener anew for every request.
    res.on('finish', record);
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
