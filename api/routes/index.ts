import type { Router } from 'express';
import type { AppDeps } from '../deps.ts';
import { createRequireAuth } from '../middleware/auth.ts';
import { adsRouter } from './ads.ts';
import { authRouter } from './auth.ts';
import { chainsRouter } from './chains.ts';
import { routesRouter } from './routes.ts';
import { tradesRouter } from './trades.ts';

/** Every router mounted under /v1: chains, routes, ads, trades and sign-in (/v1/auth). */
export function v1Routers(deps: AppDeps): Router[] {
  const requireAuth = createRequireAuth(deps.auth);
  return [chainsRouter(deps), routesRouter(deps), adsRouter({ ...deps, requireAuth }), tradesRouter({ ...deps, requireAuth }), authRouter({ auth: deps.auth, requireAuth })];
}
