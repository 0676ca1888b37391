import type { Knex } from 'knex';
import { paginate, toPage } from '../pagination.ts';
import { runPrepared } from '../prepared.ts';
import type { ChainKind } from '../../domain/index.ts';

/** A registered chain as the API shows it. */
export interface Chain {
  id: string;
  name: string;
  chainId: string;
  kind: ChainKind;
  adManagerAddress: string;
  orderPortalAddress: string;
  /** A Stellar chain's network passphrase (what a client signs Soroban transactions for); null on EVM. */
  networkPassphrase: string | null;
  /** The RPC URL the operator publishes for a Stellar chain's clients (registry `publicRpcUrl`); null when none. */
  publicRpcUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface ChainRow {
  id: string;
  name: string;
  chain_id: string;
  kind: ChainKind;
  ad_manager_address: string;
  order_portal_address: string;
  rpc_url: string | null;
  confirmations: number;
  network_passphrase: string | null;
  public_rpc_url: string | null;
  created_at: Date;
  updated_at: Date;
  cursor_created_at: string;
}

function toChain(row: ChainRow): Chain {
  return {
    id: row.id,
    name: row.name,
    chainId: row.chain_id,
    kind: row.kind,
    adManagerAddress: row.ad_manager_address,
    orderPortalAddress: row.order_portal_address,
    networkPassphrase: row.network_passphrase,
    publicRpcUrl: row.public_rpc_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface ChainFilter {
  name?: string;
  chainId?: string;
}

/** Chains matching every given filter, newest first, one page. */
export async function listChains(knex: Knex, filter: ChainFilter, limit: number, cursor?: string) {
  const query = knex<ChainRow>('chains').select('chains.*');
  if (filter.name !== undefined) query.where('chains.name', filter.name);
  if (filter.chainId !== undefined) query.where('chains.chain_id', filter.chainId);
  const { items, nextCursor } = toPage<ChainRow>(await runPrepared(knex, paginate(query, 'chains', limit, cursor)), limit, 'chains');
  return { items: items.map(toChain), nextCursor };
}

/** The chain with this public chain id, or undefined. */
export async function findChainByChainId(knex: Knex, chainId: string): Promise<Chain | undefined> {
  const row = await knex<ChainRow>('chains').where({ chain_id: chainId }).first();
  return row && toChain(row);
}

/** The network passphrases of the registry's Stellar chains, by ascending chain id (the first is the default network). */
export async function stellarNetworkPassphrases(knex: Knex): Promise<string[]> {
  const rows = await knex<ChainRow>('chains').where({ kind: 'STELLAR' }).whereNotNull('network_passphrase')
    .orderByRaw('length(chain_id), chain_id').select('network_passphrase');
  return [...new Set(rows.map((row) => row.network_passphrase!))];
}

/** A token of a Stellar chain, as stellar.toml's [[CURRENCIES]] lists it. */
export interface StellarCurrency {
  symbol: string;
  name: string;
  /** The token's contract (a SEP-41 token or a Stellar Asset Contract). */
  contract: string;
  decimals: number;
}

/** The tokens of the registry's Stellar chains on the network `networkPassphrase`, by symbol. */
export async function stellarCurrencies(knex: Knex, networkPassphrase: string): Promise<StellarCurrency[]> {
  const rows = await knex('tokens').join('chains', 'chains.id', 'tokens.chain_id')
    .where({ 'chains.kind': 'STELLAR', 'chains.network_passphrase': networkPassphrase })
    .orderBy(['tokens.symbol', 'tokens.address'])
    .select('tokens.symbol', 'tokens.name', 'tokens.address', 'tokens.decimals');
  return rows.map((row: { symbol: string; name: string; address: string; decimals: number }) => (
    { symbol: row.symbol, name: row.name, contract: row.address, decimals: Number(row.decimals) }
  ));
}

/**
 * The RPC URLs operators publish for Stellar chains' clients (`publicRpcUrl`), distinct, in a stable
 * order: the origins the page at /app may connect to besides the service (api/routes/app-page.ts).
 */
export async function listPublicRpcUrls(knex: Knex): Promise<string[]> {
  const rows = await knex<ChainRow>('chains').distinct('public_rpc_url').where('kind', 'STELLAR').whereNotNull('public_rpc_url').orderBy('public_rpc_url');
  return rows.map((row) => row.public_rpc_url as string);
}
