import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where code outside chains/<kind>/ compares a chain kind (`kind === 'EVM'`, `'STELLAR' !== x`,
 * `case 'EVM':`): what a kind does belongs to its adapter (chains/adapter.ts). Not scanned: the kinds'
 * own folders, tests, the browser app and the client package (API clients that show each kind's
 * wallet), and the devnet (which starts one network of each kind).
 */
const KIND = `'(?:EVM|STELLAR)'`;
const COMPARISON = new RegExp(`(?:[!=]==?\\s*${KIND})|(?:${KIND}\\s*[!=]==?)|(?:case\\s+${KIND}\\s*:)`);
const SKIPPED_DIRS = new Set(['node_modules', '.data', '.git', 'target', '.tools', 'app', 'client', 'devnet', 'test', 'dist']);
const SKIPPED_PATHS = [/^chains\/[^/]+\/.+/];

/** `file:line: text` for every chain-kind comparison in the TypeScript sources under `root`. */
export function chainKindBranches(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(rel);
        continue;
      }
      if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts') || entry.name.endsWith('.d.ts')) continue;
      if (SKIPPED_PATHS.some((pattern) => pattern.test(rel))) continue;
      readFileSync(path.join(root, rel), 'utf8').split('\n').forEach((line, i) => {
        const code = line.trim();
        // Comments may name the comparisons they forbid or explain.
        if (/^(\/\/|\/?\*)/.test(code)) return;
        if (COMPARISON.test(code)) found.push(`${rel}:${i + 1}: ${code}`);
      });
    }
  };
  walk('');
  return found;
}
