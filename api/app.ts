import express, { type Express } from 'express';
import type { HelmetOptions } from 'helmet';
import type { AppDeps } from './deps.ts';
import { corsPolicy } from './middleware/cors.ts';
import { jsonBodies } from './middleware/json-body.ts';
import { errorHandler, notFoundHandler, wrongMethodOnLiteralPath } from './middleware/errors.ts';
import { httpMetrics, rememberMountPath } from './middleware/metrics.ts';
import { requestLog } from './middleware/request-log.ts';
import { securityHeaders } from './middleware/security-headers.ts';
import { createRateLimiters } from './middleware/rate-limit.ts';
import { v1Router } from './routes/index.ts';
import { appPageRouter } from './routes/app-page.ts';
import { stellarTomlRouter } from './routes/stellar-toml.ts';
import { systemRouter } from './routes/system.ts';
import { tracingMiddleware } from '../telemetry/http.ts';

/** helmet's defaults, except that the docs page is served over plain HTTP in development: do not force its assets to https. */
export const SECURITY_HEADERS: Readonly<HelmetOptions> = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

/**
 * Builds the Express app (no listen). Order matters: security headers, CORS and rate limits first,
 * then parsing, then routers, then the 404/405 and error handlers that speak the spec's body.
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag hashed over every body: public reads set a weak ETag over what identifies the page
  // (api/http-cache.ts) and answer 304 before building it.
  app.set('etag', false);
  app.set('trust proxy', deps.config.TRUST_PROXY_HOPS);
  // Strict query parsing: repeated keys become arrays that schemas reject, nothing nests.
  app.set('query parser', 'simple');

  // First: the request's span is active for everything after it (telemetry/http.ts; a pass-through with tracing off).
  app.use(tracingMiddleware());
  app.use(requestLog(deps.logger));
  app.use(httpMetrics(deps.metrics));
  app.use(securityHeaders(SECURITY_HEADERS));
  // Before the limits: a browser page must be able to read a 429 (and its Retry-After) too.
  app.use(corsPolicy(deps.config));
  const limiters = createRateLimiters(deps.config, deps.knex);
  app.use(limiters.general);
  app.use('/v1/auth', limiters.auth);
  // A wrong method on a literal path is 405 before its body is read (or taken as a sibling's id).
  app.use(wrongMethodOnLiteralPath);
  // SEP-10's token endpoint may also be posted as a form, as the standard allows.
  app.use(jsonBodies(deps.config.BODY_LIMIT, ['/v1/auth/sep10']));

  app.use('/v1', rememberMountPath, v1Router(deps));
  app.use(stellarTomlRouter({ auth: deps.auth, knex: deps.knex, production: deps.config.NODE_ENV === 'production' }));
  app.use(appPageRouter({ knex: deps.knex }));
  app.use(systemRouter({
    knex: deps.knex, metrics: deps.metrics, metricsOnThisPort: deps.config.METRICS_ON_API_PORT,
    chainHealth: deps.chainHealth, healthDetails: deps.healthDetails,
  }));

  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}
