import type { Knex } from 'knex';
import {
  chainRowIds, findRegisteredToken, lockRegistryForImport, registeredChainKinds, upsertChain, upsertRoute, upsertToken,
  type UpsertOutcome, type UpsertResult,
} from '../db/repositories/registry-import.ts';
import { routePricing, type ChainKind } from '../domain/index.ts';
import { RegistryFileError, validateRegistryFile } from './file.ts';

export interface ImportReport {
  counts: Record<'chains' | 'tokens' | 'routes', Record<UpsertOutcome, number>>;
  /** One line per created or updated entry, e.g. "updated chain 31337: rpcUrl". */
  changes: string[];
}

const emptyCounts = () => ({ created: 0, updated: 0, unchanged: 0 });

/**
 * Validates a registry file and upserts its chains, tokens and routes in one transaction:
 * importing the same file twice changes nothing the second time; an invalid file changes
 * nothing at all. Entries not in the file are left as they are (removal is deliberate work).
 */
export async function importRegistry(knex: Knex, input: unknown): Promise<ImportReport> {
  return knex.transaction(async (trx) => {
    await lockRegistryForImport(trx);
    const file = validateRegistryFile(input, await registeredChainKinds(trx) as Map<string, ChainKind>);
    const report: ImportReport = { counts: { chains: emptyCounts(), tokens: emptyCounts(), routes: emptyCounts() }, changes: [] };
    const record = (kind: 'chains' | 'tokens' | 'routes', label: string, result: UpsertResult) => {
      report.counts[kind][result.outcome] += 1;
      if (result.outcome === 'created') report.changes.push(`created ${label}`);
      if (result.outcome === 'updated') report.changes.push(`updated ${label}: ${result.changed.join(', ')}`);
    };

    for (const chain of file.chains) {
      record('chains', `chain ${chain.chainId}`, await upsertChain(trx, chain.chainId, {
        name: chain.name,
        kind: chain.kind,
        ad_manager_address: chain.adManagerAddress,
        order_portal_address: chain.orderPortalAddress,
        // The first provider stays in rpc_url: a reader that knows one provider reads that one.
        rpc_url: chain.rpcUrls?.[0] ?? chain.rpcUrl ?? null,
        rpc_urls: chain.rpcUrls ?? null,
        rpc_quorum: chain.rpcQuorum ?? null,
        confirmations: chain.confirmations ?? 1,
        network_passphrase: chain.networkPassphrase ?? null,
        public_rpc_url: chain.publicRpcUrl ?? null,
      }));
    }
    const chainUuids = await chainRowIds(trx);
    for (const token of file.tokens) {
      const { symbol, name, decimals, kind } = token;
      const asset = token.asset ?? symbol.toUpperCase();
      record(
        'tokens',
        `token ${symbol} on ${token.chainId}`,
        await upsertToken(trx, chainUuids.get(token.chainId)!, token.address, { symbol, name, decimals, kind, asset }),
      );
    }
    const problems: string[] = [];
    for (const [i, route] of file.routes.entries()) {
      const adToken = await findToken(trx, chainUuids, route.adToken);
      const orderToken = await findToken(trx, chainUuids, route.orderToken);
      if (!adToken) problems.push(`routes.${i}.adToken: no token ${route.adToken.address} on chain ${route.adToken.chainId}`);
      if (!orderToken) problems.push(`routes.${i}.orderToken: no token ${route.orderToken.address} on chain ${route.orderToken.chainId}`);
      if (!adToken || !orderToken) continue;
      // A route the service cannot price would settle at some accidental rate: it is never registered.
      const pricing = routePricing(adToken, orderToken, route.rate ?? null);
      if (!pricing.ok) {
        problems.push(`routes.${i}: ${pricing.problem}`);
        continue;
      }
      record('routes', `route ${route.adToken.chainId}/${route.adToken.address} -> ${route.orderToken.chainId}/${route.orderToken.address}`,
        await upsertRoute(trx, adToken.id, orderToken.id, route.metadata ?? {}, route.rate ?? null));
    }
    // Throwing rolls the whole transaction back: nothing of an invalid file is kept.
    if (problems.length > 0) throw new RegistryFileError(problems);
    return report;
  });
}

async function findToken(trx: Knex.Transaction, chainUuids: Map<string, string>, ref: { chainId: string; address: string }) {
  const chainUuid = chainUuids.get(ref.chainId);
  return chainUuid ? findRegisteredToken(trx, chainUuid, ref.address) : undefined;
}
