import type { Router } from 'express';
import type { Knex } from 'knex';
import type { Config } from '../../config.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import type { Secrets } from '../../secrets.ts';
import { adsRouter } from './ads.ts';
import { authRouter } from './auth.ts';
import { chainsRouter } from './chains.ts';
import { plannedRouter } from './planned.ts';
import { routesRouter } from './routes.ts';
import { tradesRouter } from './trades.ts';

/** Every router mounted under /v1: the public reads, sign-in (/v1/auth), then the planned endpoints (501). */
export function v1Routers(deps: { knex: Knex; registryCache: RegistryCache; config: Config; secrets: Secrets }): Router[] {
  return [chainsRouter(deps), routesRouter(deps), adsRouter(deps), tradesRouter(deps), authRouter(deps), plannedRouter()];
}
