import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importViolations } from '../tools/lint-imports.ts';

const root = new URL('..', import.meta.url);
const IGNORED = new Set(['node_modules', '.data', '.git', 'target']);

describe('the import rules of the README', () => {
  it('hold for every top-level folder: one direction, no cycles', async () => {
    // The same cruise as `npm run lint:imports` (tools/lint-imports.ts).
    const { violations, result } = await importViolations(root.pathname);
    expect(violations).toEqual([]);
    // Not vacuous: the whole tree was read, the service's modules included.
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(result.modules.some((m) => m.source === 'entrypoints/compose/api.ts')).toBe(true);
    expect(result.modules.some((m) => m.source === 'trades/lifecycle/machine.ts')).toBe(true);
  });

  it('fail on planted violations: a use case importing HTTP, trades importing an ads use case, an impure domain, a workflow using Node, an orchestrator deciding with an ads use case, db knowing trades, contracts knowing db, anything but tools building on the entry points, a cycle, an impure lifecycle, a workflow reaching a trade internal, SQL drivers outside db', async () => {
    // A small tree of the same rooms in a temporary directory, cruised with the same rules: each
    // planted import must be reported by the rule that forbids it.
    const dir = mkdtempSync(path.join(tmpdir(), 'planted-imports-'));
    const files: Record<string, string> = {
      'api/app.ts': 'export const app = 1;\n',
      'ads/service.ts': 'export const service = 1;\n',
      'ads/ledger.ts': 'export const ledger = 1;\n',
      'trades/service.ts': "import { app } from '../api/app.ts';\nimport { service } from '../ads/service.ts';\nimport { ledger } from '../ads/ledger.ts';\nexport const x = app + service + ledger;\n",
      'domain/ids.ts': "import { a } from '../db/a.ts';\nexport const id = a;\n",
      'db/a.ts': "import { b } from './b.ts';\nexport const a = 1;\nexport const a2 = b;\n",
      'db/b.ts': "import { a } from './a.ts';\nexport const b = a;\n",
      'workflows/temporal/workflows.ts': "import { readFileSync } from 'node:fs';\nexport const w = readFileSync;\n",
      'workflows/embedded/orchestrator.ts': "import { service } from '../../ads/service.ts';\nexport const o = service;\n",
      'db/repositories/trades.ts': "import { t } from '../../trades/lifecycle/index.ts';\nexport const r = t;\n",
      'trades/lifecycle/index.ts': 'export const t = 1;\n',
      // The lifecycle reaching a repository, a package and a Node built-in; a workflow a trade activity; ads/ the api; trades pg.
      'trades/lifecycle/machine.ts': "import { r } from '../../db/repositories/trades.ts';\nimport { randomUUID } from 'node:crypto';\nimport { z } from 'zod';\nexport const m = [r, randomUUID, z];\n",
      'trades/activities.ts': 'export const activities = 1;\n',
      'trades/orchestrator.ts': 'export const port = 1;\n',
      'workflows/embedded/runner.ts': "import { activities } from '../../trades/activities.ts';\nimport { port } from '../../trades/orchestrator.ts';\nimport { t } from '../../trades/lifecycle/index.ts';\nexport const run = [activities, port, t];\n",
      'ads/confirm.ts': "import { app } from '../api/app.ts';\nimport pg from 'pg';\nexport const confirm = [app, pg];\n",
      'contracts/evm/compile.ts': "import { a } from '../../db/a.ts';\nexport const c = a;\n",
      'entrypoints/compose/api.ts': 'export const parts = 1;\n',
      'api/deps.ts': "import { parts } from '../entrypoints/compose/api.ts';\nexport const deps = parts;\n",
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    // The packages resolve from the repository's node_modules, as in the tree.
    symlinkSync(new URL('../node_modules', import.meta.url).pathname, path.join(dir, 'node_modules'));
    let violations: string[];
    try {
      ({ violations } = await importViolations(dir, ['api', 'ads', 'trades', 'domain', 'db', 'workflows', 'contracts', 'entrypoints']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const found = new Set(violations.map((v) => v.replace(/ \(cycle .*\)$/, '')));
    for (const expected of [
      'use-cases-no-http: trades/service.ts -> api/app.ts',
      'trades-only-ad-ledger: trades/service.ts -> ads/service.ts',
      'domain-is-pure: domain/ids.ts -> db/a.ts',
      'temporal-workflow-no-builtins: workflows/temporal/workflows.ts -> fs',
      'orchestrators-carry-out: workflows/embedded/orchestrator.ts -> ads/service.ts',
      'db-below-logic: db/repositories/trades.ts -> trades/lifecycle/index.ts',
      'contracts-alone: contracts/evm/compile.ts -> db/a.ts',
      'nothing-imports-entrypoints: api/deps.ts -> entrypoints/compose/api.ts',
      'api-no-processes: api/deps.ts -> entrypoints/compose/api.ts',
      'lifecycle-is-pure: trades/lifecycle/machine.ts -> db/repositories/trades.ts',
      'lifecycle-is-pure: trades/lifecycle/machine.ts -> crypto',
      'workflows-through-the-port: workflows/embedded/runner.ts -> trades/activities.ts',
      'nothing-imports-api: ads/confirm.ts -> api/app.ts',
    ]) expect([...found], expected).toContain(expected);
    // A package from the lifecycle, the PostgreSQL driver outside db/ (resolved into node_modules).
    expect([...found].some((v) => /^lifecycle-is-pure: trades\/lifecycle\/machine\.ts -> .*node_modules\/zod\//.test(v)), [...found].join('\n')).toBe(true);
    expect([...found].some((v) => /^sql-only-in-db: ads\/confirm\.ts -> .*node_modules\/pg\//.test(v)), [...found].join('\n')).toBe(true);
    // The port and the lifecycle stay open to the workflows, the domain and itself to the lifecycle.
    expect([...found].some((v) => /^workflows-through-the-port: .* -> trades\/(orchestrator\.ts|lifecycle\/)/.test(v))).toBe(false);
    expect([...found].some((v) => /^lifecycle-is-pure: .* -> trades\/lifecycle\//.test(v))).toBe(false);
    expect([...found].some((v) => v.startsWith('no-cycles: db/'))).toBe(true);
    // The ad ledger stays allowed.
    expect([...found].some((v) => v.includes('-> ads/ledger.ts'))).toBe(false);
  });

  it('keep all SQL in db/: no runtime module outside it builds a query or sends raw SQL', () => {
    // A query builder on a table, raw SQL, a row lock, or SQL sent on a pg client.
    const SQL = /\b(knex|trx|db)\s*\(\s*['"`]|\b(knex|trx|db)\.(select|insert|update|delete|del|count|first|pluck|from|into|table|withSchema)\s*\(|\)\s*\.(from|into)\s*\(\s*['"`]|\.raw\s*\(|\.forUpdate\s*\(|\.query\s*\(\s*['"`]\s*(SELECT|INSERT|UPDATE|DELETE|LISTEN|NOTIFY)\b/i;
    // Not vacuous: each way of writing SQL is caught.
    for (const planted of [
      "await knex('ads').where({ id })", "await trx.update({ pool_amount: '0' })", "knex.select('id').from('trades')",
      "knex.insert(row).into('ads')", "await trx.table('ads')", "await knex.raw('SELECT 1')", "q.forUpdate()", "await client.query('UPDATE ads SET pool_amount = 0')",
    ]) expect(SQL.test(planted), planted).toBe(true);
    for (const fine of ["Buffer.from('00', 'hex')", "Array.from(rows)", "chainState.orderState(chain, portal, hash)"]) expect(SQL.test(fine), fine).toBe(false);
    const offenders: string[] = [];
    let scanned = 0;
    const walk = (dir: string) => {
      for (const entry of readdirSync(new URL(dir, root), { withFileTypes: true })) {
        const rel = `${dir}${entry.name}`;
        if (entry.isDirectory()) {
          if (!IGNORED.has(entry.name) && !entry.name.startsWith('.') && !['db', 'test', 'tools', 'deploy', 'contracts'].includes(rel)) walk(`${rel}/`);
        } else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) {
          const text = readFileSync(new URL(rel, root), 'utf8');
          scanned += 1;
          if (SQL.test(text)) offenders.push(rel);
        }
      }
    };
    walk('');
    expect(offenders).toEqual([]);
    expect(scanned).toBeGreaterThan(100);
  });

  it('keep every runtime line at most 160 characters (issue 34: the house is hard to read)', () => {
    // The runtime TypeScript: tests, tools/, client/ (generated and its own package) and .d.ts files aside.
    // Excluded for now: app/ (the browser app, rewrapped separately), and retention/ and
    // db/repositories/trade-follow-ups.ts (being changed on another branch); drop them here once they comply.
    const LIMIT = 160;
    const SKIPPED = ['test', 'tools', 'client', 'app', 'retention', 'db/repositories/trade-follow-ups.ts'];
    const offenders: string[] = [];
    let scanned = 0;
    const walk = (dir: string) => {
      for (const entry of readdirSync(new URL(dir, root), { withFileTypes: true })) {
        const rel = `${dir}${entry.name}`;
        if (IGNORED.has(entry.name) || entry.name.startsWith('.') || SKIPPED.includes(rel)) continue;
        if (entry.isDirectory()) walk(`${rel}/`);
        else if (/\.ts$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name)) {
          scanned += 1;
          readFileSync(new URL(rel, root), 'utf8').split('\n').forEach((line, index) => {
            if (line.length > LIMIT) offenders.push(`${rel}:${index + 1} (${line.length} characters)`);
          });
        }
      }
    };
    walk('');
    expect(offenders).toEqual([]);
    expect(scanned).toBeGreaterThan(150);
  });
});
