import { Router } from 'express';
import { createStreamTickets } from '../../auth/stream-tickets.ts';
import type { AppDeps } from '../deps.ts';
import { createRequireAuth } from '../middleware/auth.ts';
import { idempotency, isIdempotentOperation } from '../middleware/idempotency.ts';
import { registry } from '../openapi/operations.ts';
import { adsRouter } from './ads.ts';
import { authRouter } from './auth.ts';
import { chainsRouter } from './chains.ts';
import { eventsRouter } from './events.ts';
import { quotesRouter } from './quotes.ts';
import { routesRouter } from './token-routes.ts';
import { tradesRouter } from './trades.ts';
import { webhooksRouter } from './webhooks.ts';

/**
 * One router for everything under /v1: chains, routes, quotes, ads, trades and sign-in (/v1/auth). One
 * router, not five mounted side by side: each mounted router costs every request a prefix match,
 * a path trim and a dispatch of its own (profiled on the read path). Public reads first.
 */
export function v1Router(deps: AppDeps): Router {
  const requireAuth = createRequireAuth(deps.auth);
  const router = Router();
  // Idempotency-Key before the routes it guards: authenticated here (the route's requireAuth then
  // passes), claimed or replayed, then the route runs (api/middleware/idempotency.ts).
  const idempotent = idempotency({
    knex: deps.knex, logger: deps.logger, metrics: deps.metrics,
    waitSeconds: deps.config.IDEMPOTENCY_WAIT_SECONDS, maxKeysPerUser: deps.config.MAX_IDEMPOTENCY_KEYS_PER_USER,
  });
  for (const path of idempotentPaths()) router.post(path, requireAuth, idempotent);
  chainsRouter(deps, router);
  routesRouter(deps, router);
  quotesRouter(deps, router);
  adsRouter({ ...deps, requireAuth }, router);
  tradesRouter({ ...deps, requireAuth }, router);
  eventsRouter({
    knex: deps.knex, eventHub: deps.eventHub, requireAuth, logger: deps.logger,
    tickets: createStreamTickets({ knex: deps.knex, ttlSeconds: deps.config.SSE_TICKET_TTL_SECONDS }),
    settings: {
      heartbeatSeconds: deps.config.SSE_HEARTBEAT_SECONDS, maxStreamsPerClient: deps.config.SSE_MAX_STREAMS_PER_CLIENT,
      maxStreams: deps.config.SSE_MAX_STREAMS, sessionCheckSeconds: deps.config.SSE_SESSION_CHECK_SECONDS,
    },
  }, router);
  webhooksRouter({ webhooks: deps.webhooks, requireAuth }, router);
  authRouter({ auth: deps.auth, requireAuth }, router);
  return router;
}

/** The Express paths (under /v1) of the operations that honour Idempotency-Key, read from the document's registry. */
function idempotentPaths(): string[] {
  return registry.definitions.flatMap((definition) =>
    definition.type === 'route' && isIdempotentOperation(definition.route.method, definition.route.path)
      ? [definition.route.path.slice('/v1'.length).replace(/\{([^}]+)\}/g, ':$1')]
      : []);
}
