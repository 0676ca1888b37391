import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

const rules = createRequire(import.meta.url)('../.dependency-cruiser.cjs');
const root = new URL('..', import.meta.url);
const IGNORED = new Set(['node_modules', '.data', '.git', 'target']);

describe('the import rules of the README', () => {
  it('hold for every top-level folder: one direction, no cycles', async () => {
    const entries = readdirSync(root, { withFileTypes: true })
      .filter((e) => (e.isDirectory() && !IGNORED.has(e.name) && !e.name.startsWith('.')) || (e.isFile() && /\.ts$/.test(e.name)))
      .map((e) => e.name);
    const cwd = process.cwd();
    process.chdir(root.pathname);
    let result: ICruiseResult;
    try {
      result = (await cruise(entries, { ruleSet: rules, ...rules.options, validate: true })).output as ICruiseResult;
    } finally {
      process.chdir(cwd);
    }
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
    expect(violations).toEqual([]);
    // Not vacuous: the whole tree was read, the service's modules included.
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(result.modules.some((m) => m.source === 'entrypoints/container.ts')).toBe(true);
  });

  it('fail on planted violations: a use case importing HTTP, trades importing an ads use case, an impure domain, a workflow using Node, an orchestrator deciding with an ads use case, db knowing trades, contracts knowing db, anything but tools building on the entry points, a cycle', async () => {
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
      'contracts/evm/compile.ts': "import { a } from '../../db/a.ts';\nexport const c = a;\n",
      'entrypoints/container.ts': 'export const container = 1;\n',
      'api/deps.ts': "import { container } from '../entrypoints/container.ts';\nexport const deps = container;\n",
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    const cwd = process.cwd();
    process.chdir(dir);
    let result: ICruiseResult;
    try {
      result = (await cruise(['api', 'ads', 'trades', 'domain', 'db', 'workflows', 'contracts', 'entrypoints'], { ruleSet: rules, ...rules.options, validate: true })).output as ICruiseResult;
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
    const found = new Set(result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`));
    for (const expected of [
      'use-cases-no-http: trades/service.ts -> api/app.ts',
      'trades-only-ad-ledger: trades/service.ts -> ads/service.ts',
      'domain-is-pure: domain/ids.ts -> db/a.ts',
      'temporal-workflow-no-builtins: workflows/temporal/workflows.ts -> fs',
      'orchestrators-carry-out: workflows/embedded/orchestrator.ts -> ads/service.ts',
      'db-below-logic: db/repositories/trades.ts -> trades/lifecycle/index.ts',
      'contracts-alone: contracts/evm/compile.ts -> db/a.ts',
      'nothing-imports-entrypoints: api/deps.ts -> entrypoints/container.ts',
      'api-no-processes: api/deps.ts -> entrypoints/container.ts',
    ]) expect([...found], expected).toContain(expected);
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
});
