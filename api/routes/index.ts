import { Router } from 'express';
import type { AppDeps } from '../deps.ts';
import { createRequireAuth } from '../middleware/auth.ts';
import { adsRouter } from './ads.ts';
import { authRouter } from './auth.ts';
import { chainsRouter } from './chains.ts';
import { eventsRouter } from './events.ts';
import { routesRouter } from './token-routes.ts';
import { tradesRouter } from './trades.ts';
import { webhooksRouter } from './webhooks.ts';

/**
 * One router for everything under /v1: chains, routes, ads, trades and sign-in (/v1/auth). One
 * router, not five mounted side by side: each mounted router costs every request a prefix match,
 * a path trim and a dispatch of its own (profiled on the read path, issue 15). Public reads first.
 */
export function v1Router(deps: AppDeps): Router {
  const requireAuth = createRequireAuth(deps.auth);
  const router = Router();
  chainsRouter(deps, router);
  routesRouter(deps, router);
  adsRouter({ ...deps, requireAuth }, router);
  tradesRouter({ ...deps, requireAuth }, router);
  eventsRouter({
    knex: deps.knex, eventHub: deps.eventHub, requireAuth, logger: deps.logger,
    settings: {
      heartbeatSeconds: deps.config.SSE_HEARTBEAT_SECONDS, maxStreamsPerClient: deps.config.SSE_MAX_STREAMS_PER_CLIENT,
      maxStreams: deps.config.SSE_MAX_STREAMS, sessionCheckSeconds: deps.config.SSE_SESSION_CHECK_SECONDS,
    },
  }, router);
  webhooksRouter({ webhooks: deps.webhooks, requireAuth }, router);
  authRouter({ auth: deps.auth, requireAuth }, router);
  return router;
}
