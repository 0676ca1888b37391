import { context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { currentTracing, tracer } from './tracing.ts';

/**
 * Express middleware: one server span per request, the root of its own trace, active while the request's
 * handlers run (so the workflow it starts, the jobs it queues and the activities it runs are its
 * children). The API is public: a caller's W3C `traceparent` neither names the trace nor decides whether
 * it is sampled (a caller could otherwise force every request traced, or hide its own); it is kept as a
 * span link, so the caller's trace still finds ours. Named `METHOD route` (the matched route pattern,
 * never the raw path with ids) once the response is sent; a 5xx marks it as an error. With tracing
 * off it only calls `next()`.
 */
export function tracingMiddleware(): RequestHandler {
  return (req, res, next) => {
    if (!currentTracing()) return next();
    const caller = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, req.headers));
    const parent = ROOT_CONTEXT;
    const span = tracer().startSpan(req.method, {
      kind: SpanKind.SERVER,
      root: true,
      attributes: { 'http.request.method': req.method, 'url.path': req.path },
      ...(caller && isSpanContextValid(caller) ? { links: [{ context: caller, attributes: { 'relayer.link': 'caller traceparent' } }] } : {}),
    }, parent);
    res.once('finish', () => {
      const route = req.route?.path as string | undefined;
      if (route) {
        span.updateName(`${req.method} ${req.baseUrl}${route}`);
        span.setAttribute('http.route', `${req.baseUrl}${route}`);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), next);
  };
}
