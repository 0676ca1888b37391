import type { Router } from 'express';
import type { Knex } from 'knex';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { adsRouter } from './ads.ts';
import { chainsRouter } from './chains.ts';
import { plannedRouter } from './planned.ts';
import { routesRouter } from './routes.ts';
import { tradesRouter } from './trades.ts';

/** The public read API under /v1, then the planned endpoints (501). */
export function readRouters(deps: { knex: Knex; registryCache: RegistryCache }): Router[] {
  return [chainsRouter(deps), routesRouter(deps), adsRouter(deps), tradesRouter(deps), plannedRouter()];
}
