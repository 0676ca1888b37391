/**
 * `npm run lint:imports`: checks the import rules (.dependency-cruiser.cjs, the README's "Layout")
 * over the whole tree with dependency-cruiser and prints each violation as `rule: from -> to`;
 * exits 1 when there is any. test/architecture.test.ts runs the same `importViolations` on the tree
 * and on planted violations.
 */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IRuleSetType } from 'dependency-cruiser';

const rules = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as IRuleSetType & { options: Record<string, unknown> };
const IGNORED = new Set(['node_modules', '.data', '.git', 'target']);

/** The top-level folders and .ts files of `root` that the rules cover. */
export function cruisedEntries(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => (e.isDirectory() && !IGNORED.has(e.name) && !e.name.startsWith('.')) || (e.isFile() && /\.ts$/.test(e.name)))
    .map((e) => e.name);
}

/**
 * Cruises `entries` (default: every top-level folder and file) of the tree at `root` with the
 * rules; resolves to the violations as `rule: from -> to` (with the cycle for `no-cycles`) and the
 * cruise's summary and modules. dependency-cruiser resolves paths from the working directory, so it
 * is changed for the cruise and restored.
 */
export async function importViolations(root: string, entries = cruisedEntries(root)): Promise<{ violations: string[]; result: ICruiseResult }> {
  const cwd = process.cwd();
  process.chdir(root);
  let result: ICruiseResult;
  try {
    result = (await cruise(entries, { ruleSet: rules, ...rules.options, validate: true })).output as ICruiseResult;
  } finally {
    process.chdir(cwd);
  }
  const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
  return { violations, result };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { violations, result } = await importViolations(root);
  for (const violation of violations) console.error(violation);
  console.log(`${result.summary.totalCruised} modules, ${violations.length} import rule violation(s)`);
  process.exit(violations.length > 0 ? 1 : 0);
}
