import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Chain } from './chains.ts';
import type { ChainKind, RouteRate } from '../../domain/index.ts';

/** A token with the chain it lives on, as nested in routes (and, summarised, in ads and trades). */
export interface TokenWithChain {
  id: string;
  symbol: string;
  name: string;
  address: string;
  decimals: number;
  kind: 'NATIVE' | 'ERC20' | 'SEP41';
  /** What the token stands for (e.g. USD): tokens of one asset convert by their decimals. Null: unknown. */
  asset: string | null;
  chain: { id: string; name: string; chainId: string; kind: ChainKind };
}

/**
 * Everything signing and verification need about a chain, including what the API never shows
 * (RPC URL, confirmations, Stellar network passphrase).
 */
export interface ChainConnection extends Omit<Chain, 'createdAt' | 'updatedAt'> {
  /** The first provider (the only one when `rpcUrls` is null). */
  rpcUrl: string | null;
  /** Every provider, best first; null: `rpcUrl` alone. */
  rpcUrls: string[] | null;
  /** Providers that must agree on a fact; null: a majority. */
  rpcQuorum: number | null;
  confirmations: number;
  networkPassphrase: string | null;
}

export interface RouteWithTokens {
  id: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  adToken: TokenWithChain;
  orderToken: TokenWithChain;
  /** The route's stated rate, or null: its tokens then convert only as one asset (domain/route-pricing.ts). */
  rate: RouteRate | null;
}

/**
 * Chains, tokens and routes held in memory. The registry is small and changes only through the admin CLI,
 * yet every ad and trade in a list nests its tokens: resolving them here instead of joining four
 * tables per row keeps list queries single-table index scans. A lookup that misses reloads at
 * once (so anything just imported is found); otherwise entries refresh after `ttlMs`.
 */
export class RegistryCache {
  private tokens = new Map<string, TokenWithChain>();
  private routes = new Map<string, RouteWithTokens>();
  private chains = new Map<string, ChainConnection>();
  private loadedAt = 0;
  /** Changes when anything loaded changes (a content hash): part of the ETag of every read that nests registry data. */
  version = '';
  private loading: Promise<void> | undefined;

  constructor(private readonly knex: Knex, private readonly ttlMs = 10_000) {}

  /** `version`, after a reload when the entries are older than `ttlMs`: for reads that reuse texts built from them. */
  async current(): Promise<string> {
    await this.fresh(true);
    return this.version;
  }

  async route(id: string): Promise<RouteWithTokens | undefined> {
    await this.fresh(this.routes.has(id));
    return this.routes.get(id);
  }

  /** A chain by its public chain id, with its connection details. */
  async chain(chainId: string): Promise<ChainConnection | undefined> {
    await this.fresh(this.chains.has(chainId));
    return this.chains.get(chainId);
  }

  /** Every registered chain with its connection details, freshly loaded (start-up checks read them all). */
  async allChains(): Promise<ChainConnection[]> {
    await this.fresh(false);
    return [...this.chains.values()];
  }

  /** Resolves many ids with at most one reload. */
  async tokensById(ids: Iterable<string>): Promise<Map<string, TokenWithChain>> {
    const wanted = [...new Set(ids)];
    await this.fresh(wanted.every((id) => this.tokens.has(id)));
    return this.tokens;
  }

  async routesById(ids: Iterable<string>): Promise<Map<string, RouteWithTokens>> {
    const wanted = [...new Set(ids)];
    await this.fresh(wanted.every((id) => this.routes.has(id)));
    return this.routes;
  }

  private async fresh(allPresent: boolean): Promise<void> {
    if (allPresent && Date.now() - this.loadedAt < this.ttlMs) return;
    // One reload at a time: concurrent misses share it.
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    await this.loading;
  }

  private async load(): Promise<void> {
    const chains = new Map<string, ChainConnection>();
    for (const row of await this.knex('chains').select('*')) {
      chains.set(row.chain_id, {
        id: row.id,
        name: row.name,
        chainId: row.chain_id,
        kind: row.kind,
        adManagerAddress: row.ad_manager_address,
        orderPortalAddress: row.order_portal_address,
        rpcUrl: row.rpc_url,
        rpcUrls: row.rpc_urls ?? null,
        rpcQuorum: row.rpc_quorum ?? null,
        confirmations: row.confirmations,
        networkPassphrase: row.network_passphrase,
        publicRpcUrl: row.public_rpc_url ?? null,
      });
    }
    const tokenRows = await this.knex('tokens')
      .join('chains', 'chains.id', 'tokens.chain_id')
      .select(
        'tokens.id', 'tokens.symbol', 'tokens.name', 'tokens.address', 'tokens.decimals', 'tokens.kind', 'tokens.asset',
        'chains.id as chain_uuid', 'chains.name as chain_name', 'chains.chain_id as chain_public_id', 'chains.kind as chain_kind',
      );
    const tokens = new Map<string, TokenWithChain>();
    for (const row of tokenRows) {
      tokens.set(row.id, {
        id: row.id,
        symbol: row.symbol,
        name: row.name,
        address: row.address,
        decimals: row.decimals,
        kind: row.kind,
        asset: row.asset,
        chain: { id: row.chain_uuid, name: row.chain_name, chainId: row.chain_public_id, kind: row.chain_kind },
      });
    }
    const routes = new Map<string, RouteWithTokens>();
    for (const row of await this.knex('routes').select('*')) {
      const adToken = tokens.get(row.ad_token_id);
      const orderToken = tokens.get(row.order_token_id);
      if (!adToken || !orderToken) continue; // a token inserted after the token query ran; next reload has it
      const rate = row.rate_order_units === null ? null : { orderUnits: String(row.rate_order_units), adUnits: String(row.rate_ad_units) };
      routes.set(row.id, { id: row.id, metadata: row.metadata, createdAt: row.created_at, updatedAt: row.updated_at, adToken, orderToken, rate });
    }
    this.chains = chains;
    this.tokens = tokens;
    this.routes = routes;
    this.version = createHash('sha1').update(JSON.stringify([[...chains.values()], [...tokens.values()], [...routes.values()]])).digest('base64url');
    this.loadedAt = Date.now();
  }
}
