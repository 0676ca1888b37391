import type { Knex } from 'knex';
import type { ChainKind } from '../domain/index.ts';
import { RegistryFileError, validateRegistryFile, type ChainEntry, type RouteEntry, type TokenEntry } from './file.ts';

type Outcome = 'created' | 'updated' | 'unchanged';

export interface ImportReport {
  counts: Record<'chains' | 'tokens' | 'routes', Record<Outcome, number>>;
  /** One line per created or updated entry, e.g. "updated chain 31337: rpcUrl". */
  changes: string[];
}

const emptyCounts = () => ({ created: 0, updated: 0, unchanged: 0 });

/** Columns that differ between the stored row and the wanted values. */
function changedColumns(row: Record<string, unknown>, wanted: Record<string, unknown>): string[] {
  return Object.keys(wanted).filter((key) => JSON.stringify(row[key] ?? null) !== JSON.stringify(wanted[key] ?? null));
}

async function upsert(
  trx: Knex.Transaction,
  table: string,
  key: Record<string, unknown>,
  wanted: Record<string, unknown>,
): Promise<{ id: string; outcome: Outcome; changed: string[] }> {
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

/**
 * Validates a registry file and upserts its chains, tokens and routes in one transaction:
 * importing the same file twice changes nothing the second time; an invalid file changes
 * nothing at all. Entries not in the file are left as they are (removal is deliberate work).
 */
export async function importRegistry(knex: Knex, input: unknown): Promise<ImportReport> {
  return knex.transaction(async (trx) => {
    // One import at a time; readers are not blocked.
    await trx.raw('LOCK TABLE chains, tokens, routes IN SHARE ROW EXCLUSIVE MODE');
    const registered = await trx('chains').select('chain_id', 'kind');
    const file = validateRegistryFile(input, new Map(registered.map((row) => [row.chain_id, row.kind as ChainKind])));
    const report: ImportReport = { counts: { chains: emptyCounts(), tokens: emptyCounts(), routes: emptyCounts() }, changes: [] };
    const record = (kind: 'chains' | 'tokens' | 'routes', label: string, result: { outcome: Outcome; changed: string[] }) => {
      report.counts[kind][result.outcome] += 1;
      if (result.outcome === 'created') report.changes.push(`created ${label}`);
      if (result.outcome === 'updated') report.changes.push(`updated ${label}: ${result.changed.join(', ')}`);
    };

    for (const chain of file.chains) record('chains', `chain ${chain.chainId}`, await upsertChain(trx, chain));
    const chainUuids = new Map<string, string>(
      (await trx('chains').select('id', 'chain_id')).map((row) => [row.chain_id, row.id]),
    );
    for (const token of file.tokens) {
      record('tokens', `token ${token.symbol} on ${token.chainId}`, await upsertToken(trx, chainUuids.get(token.chainId)!, token));
    }
    const problems: string[] = [];
    for (const [i, route] of file.routes.entries()) {
      const adTokenId = await findTokenId(trx, chainUuids, route.adToken);
      const orderTokenId = await findTokenId(trx, chainUuids, route.orderToken);
      if (!adTokenId) problems.push(`routes.${i}.adToken: no token ${route.adToken.address} on chain ${route.adToken.chainId}`);
      if (!orderTokenId) problems.push(`routes.${i}.orderToken: no token ${route.orderToken.address} on chain ${route.orderToken.chainId}`);
      if (!adTokenId || !orderTokenId) continue;
      record('routes', `route ${route.adToken.chainId}/${route.adToken.address} -> ${route.orderToken.chainId}/${route.orderToken.address}`,
        await upsertRoute(trx, adTokenId, orderTokenId, route));
    }
    // Throwing rolls the whole transaction back: nothing of an invalid file is kept.
    if (problems.length > 0) throw new RegistryFileError(problems);
    return report;
  });
}

function upsertChain(trx: Knex.Transaction, chain: ChainEntry) {
  return upsert(trx, 'chains', { chain_id: chain.chainId }, {
    name: chain.name,
    kind: chain.kind,
    ad_manager_address: chain.adManagerAddress,
    order_portal_address: chain.orderPortalAddress,
    rpc_url: chain.rpcUrl ?? null,
    confirmations: chain.confirmations ?? 1,
    network_passphrase: chain.networkPassphrase ?? null,
  });
}

function upsertToken(trx: Knex.Transaction, chainUuid: string, token: TokenEntry) {
  return upsert(trx, 'tokens', { chain_id: chainUuid, address: token.address }, {
    symbol: token.symbol,
    name: token.name,
    decimals: token.decimals,
    kind: token.kind,
  });
}

function upsertRoute(trx: Knex.Transaction, adTokenId: string, orderTokenId: string, route: RouteEntry) {
  return upsert(trx, 'routes', { ad_token_id: adTokenId, order_token_id: orderTokenId }, { metadata: route.metadata ?? {} });
}

async function findTokenId(trx: Knex.Transaction, chainUuids: Map<string, string>, ref: { chainId: string; address: string }) {
  const chainUuid = chainUuids.get(ref.chainId);
  if (!chainUuid) return undefined;
  const row = await trx('tokens').where({ chain_id: chainUuid, address: ref.address }).first('id');
  return row?.id as string | undefined;
}
