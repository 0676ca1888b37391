/**
 * `tsx tools/statement-origins.ts <statement log> [trades]`: where a run's PostgreSQL transactions
 * come from. Reads a log written with `log_statement = 'all'` and `log_line_prefix = '%m [%p] %v %a '`
 * (what `BENCH_LOG_STATEMENTS` of tools/bench-trades.ts sets), groups the statements into
 * transactions (one backend, one virtual transaction id; a statement outside a transaction is one),
 * and prints, per process (application_name) and per kind of transaction (its statements with
 * literals and parameters elided), how many there were, divided by `trades` when given.
 */
import { readFileSync } from 'node:fs';

const [file, tradesArg] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx tools/statement-origins.ts <statement log> [trades]');
const trades = Number(tradesArg ?? 1) || 1;

const LINE = /^\S+ \S+ \S+ \[(\d+)\] (\S+) (\S*) ?LOG: {2}(?:statement|execute [^:]+): (.*)$/;
/** A statement's shape: literals, numbers and placeholders elided, whitespace folded, cut short. */
const shape = (sql: string) => sql
  .replace(/'(?:[^']|'')*'/g, "'?'")
  .replace(/\$\d+/g, '?')
  .replace(/\b\d+\b/g, 'N')
  .replace(/\s+/g, ' ')
  .replace(/\(\?(?:, ?\?)+\)/g, '(?...)')
  .trim()
  .slice(0, Number(process.env.SHAPE_CHARS ?? 90));

const transactions = new Map<string, { app: string; statements: string[] }>();
let current: { sql: string[]; key: string } | undefined;
const lines = readFileSync(file, 'utf8').split('\n');
for (const line of lines) {
  const match = LINE.exec(line);
  if (match) {
    const [, pid, vxid, app, sql] = match;
    const key = `${pid}/${vxid}`;
    const tx = transactions.get(key) ?? { app: app || '?', statements: [] };
    transactions.set(key, tx);
    tx.statements.push(sql!);
    current = { sql: tx.statements, key };
  } else if (current && /^\s/.test(line)) {
    // A statement's continuation line.
    current.sql[current.sql.length - 1] += ` ${line.trim()}`;
  } else {
    current = undefined;
  }
}

const kinds = new Map<string, number>();
const byApp = new Map<string, number>();
for (const { app, statements } of transactions.values()) {
  const body = statements.map(shape).filter((s) => !/^(BEGIN|COMMIT|ROLLBACK);?$/i.test(s));
  const kind = `${app}: ${body.length <= 1 ? (body[0] ?? '(empty)') : `[tx ${body.length}] ${body.slice(0, 4).join(' ; ')}${body.length > 4 ? ' ; ...' : ''}`}`;
  kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  byApp.set(app, (byApp.get(app) ?? 0) + 1);
}
const per = (n: number) => (n / trades).toFixed(2);
console.log(`${transactions.size} transactions, ${per(transactions.size)} per trade (${trades} trades)\n`);
for (const [app, n] of [...byApp].sort((a, b) => b[1] - a[1])) console.log(`${per(n).padStart(8)}  ${app}`);
console.log('');
for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`${per(n).padStart(8)}  ${kind}`);
