import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';
import { registryIsEmpty } from '../db/repositories/registry-import.ts';
import { importRegistry, type ImportReport } from './import.ts';

/**
 * Loads the demo registry (devnet chains, tokens, routes) when no chain is registered yet, so a
 * fresh embedded run has something to show. Returns the import report, or null when the
 * database already had a registry (an operator's own is never touched).
 */
export async function loadDemoRegistryIfEmpty(knex: Knex, file: string): Promise<ImportReport | null> {
  if (!(await registryIsEmpty(knex))) return null;
  return importRegistry(knex, JSON.parse(readFileSync(file, 'utf8')));
}
