import type { Knex } from 'knex';
import { paginate, toPage } from '../pagination.ts';
import type { RegistryCache, RouteWithTokens } from './registry-cache.ts';

export interface RouteFilter {
  adTokenId?: string;
  orderTokenId?: string;
  adChainId?: string;
  orderChainId?: string;
  /** Matches routes where either token has this symbol. */
  symbol?: string;
}

/** Routes matching every given filter, newest first, one page, tokens nested. */
export async function listRoutes(knex: Knex, cache: RegistryCache, filter: RouteFilter, limit: number, cursor?: string) {
  const query = knex('routes')
    .join('tokens as ad_token', 'ad_token.id', 'routes.ad_token_id')
    .join('chains as ad_chain', 'ad_chain.id', 'ad_token.chain_id')
    .join('tokens as order_token', 'order_token.id', 'routes.order_token_id')
    .join('chains as order_chain', 'order_chain.id', 'order_token.chain_id')
    .select('routes.id');
  if (filter.adTokenId !== undefined) query.where('routes.ad_token_id', filter.adTokenId);
  if (filter.orderTokenId !== undefined) query.where('routes.order_token_id', filter.orderTokenId);
  if (filter.adChainId !== undefined) query.where('ad_chain.chain_id', filter.adChainId);
  if (filter.orderChainId !== undefined) query.where('order_chain.chain_id', filter.orderChainId);
  if (filter.symbol !== undefined) {
    const symbol = filter.symbol;
    query.where((where) => where.where('ad_token.symbol', symbol).orWhere('order_token.symbol', symbol));
  }
  const { items, nextCursor } = toPage<{ id: string; cursor_created_at: string }>(await paginate(query, 'routes', limit, cursor), limit, 'routes');
  const routes = await cache.routesById(items.map((row) => row.id));
  return { items: items.map((row) => routes.get(row.id)).filter((route): route is RouteWithTokens => route !== undefined), nextCursor };
}

/** One route with its tokens, or undefined. */
export function findRoute(cache: RegistryCache, id: string): Promise<RouteWithTokens | undefined> {
  return cache.route(id);
}
