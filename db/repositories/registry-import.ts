import type { Knex } from 'knex';

/** What an upsert did to one registry row. */
export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

export interface UpsertResult {
  id: string;
  outcome: UpsertOutcome;
  /** Columns an update changed. */
  changed: string[];
}

/** A chain as the registry file describes it, in column names. */
export interface ChainColumns {
  name: string;
  kind: string;
  ad_manager_address: string;
  order_portal_address: string;
  rpc_url: string | null;
  rpc_urls: string[] | null;
  rpc_quorum: number | null;
  confirmations: number;
  network_passphrase: string | null;
  public_rpc_url: string | null;
}

/** Takes the registry tables for one import at a time (readers are not blocked) for the rest of `trx`. */
export async function lockRegistryForImport(trx: Knex.Transaction): Promise<void> {
  await trx.raw('LOCK TABLE chains, tokens, routes IN SHARE ROW EXCLUSIVE MODE');
}

/** The kind of every registered chain, by its chain id. */
export async function registeredChainKinds(trx: Knex.Transaction): Promise<Map<string, string>> {
  const rows: Array<{ chain_id: string; kind: string }> = await trx('chains').select('chain_id', 'kind');
  return new Map(rows.map((row) => [row.chain_id, row.kind]));
}

/** The row id of every registered chain, by its chain id. */
export async function chainRowIds(trx: Knex.Transaction): Promise<Map<string, string>> {
  const rows: Array<{ id: string; chain_id: string }> = await trx('chains').select('id', 'chain_id');
  return new Map(rows.map((row) => [row.chain_id, row.id]));
}

/** Columns that differ between the stored row and the wanted values. */
function changedColumns(row: Record<string, unknown>, wanted: Record<string, unknown>): string[] {
  return Object.keys(wanted).filter((key) => JSON.stringify(row[key] ?? null) !== JSON.stringify(wanted[key] ?? null));
}

/** Inserts the row found by `key`, or updates the columns of `wanted` that differ; reports which. */
async function upsert(
  trx: Knex.Transaction,
  table: 'chains' | 'tokens' | 'routes',
  key: Record<string, unknown>,
  wanted: Record<string, unknown>,
): Promise<UpsertResult> {
  const existing = await trx(table).where(key).first();
  if (!existing) {
    const [row] = await trx(table).insert({ ...key, ...wanted }).returning('id');
    return { id: row.id, outcome: 'created', changed: [] };
  }
  const changed = changedColumns(existing, wanted);
  if (changed.length === 0) return { id: existing.id, outcome: 'unchanged', changed };
  await trx(table).where({ id: existing.id }).update({ ...wanted, updated_at: trx.fn.now() });
  return { id: existing.id, outcome: 'updated', changed };
}

/** Upserts a chain by its chain id. */
export function upsertChain(trx: Knex.Transaction, chainId: string, columns: ChainColumns): Promise<UpsertResult> {
  return upsert(trx, 'chains', { chain_id: chainId }, { ...columns });
}

/** Upserts a token by (chain row, address). */
export function upsertToken(
  trx: Knex.Transaction, chainRowId: string, address: string, columns: { symbol: string; name: string; decimals: number; kind: string; asset: string },
): Promise<UpsertResult> {
  return upsert(trx, 'tokens', { chain_id: chainRowId, address }, { ...columns });
}

/** Upserts a route by (ad token, order token). */
export function upsertRoute(
  trx: Knex.Transaction, adTokenId: string, orderTokenId: string, metadata: unknown, rate: { orderUnits: string; adUnits: string } | null,
): Promise<UpsertResult> {
  return upsert(trx, 'routes', { ad_token_id: adTokenId, order_token_id: orderTokenId }, {
    metadata, rate_order_units: rate?.orderUnits ?? null, rate_ad_units: rate?.adUnits ?? null,
  });
}

/** The token at `address` on the chain row (its row id and what pricing a route needs), or undefined. */
export async function findRegisteredToken(
  trx: Knex.Transaction, chainRowId: string, address: string,
): Promise<{ id: string; symbol: string; decimals: number; asset: string | null } | undefined> {
  return trx('tokens').where({ chain_id: chainRowId, address }).first('id', 'symbol', 'decimals', 'asset');
}

/** True when no chain is registered yet (a fresh database). */
export async function registryIsEmpty(knex: Knex): Promise<boolean> {
  const [row] = await knex('chains').count<{ count: number }[]>('* as count');
  return Number(row?.count ?? 0) === 0;
}
