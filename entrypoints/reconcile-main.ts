import { ConfigError } from '../config/config.ts';
import { createKnex } from '../db/knex.ts';
import { restorableTrades, storedTradeState } from '../trades/resume.ts';
import { reconcileTemporalTrades, type ReconciledTrade } from '../workflows/temporal/reconcile.ts';
import { temporalOrchestrator } from './parts/orchestrator.ts';
import { runTask } from './process.ts';

// `npm run reconcile [-- --dry-run] [--json]` (the image: `reconcile`): the database's open trades against their Temporal
// workflows (after a restore, or when trades are stuck): each open trade gets a running workflow
// resumed from the database, and no workflow runs on for a trade the database holds finished or does
// not hold. Prints what it found and did; a second run finds nothing to do. Run where the worker runs
// (its settings: DATABASE_URL, TEMPORAL_*). Exits 1 if an action failed.
// Through the image's entry point (entrypoints/command.ts) the command's own name comes first.
const args = process.argv.slice(process.argv[1]?.endsWith('command.ts') ? 3 : 2);
const unknown = args.filter((arg) => arg !== '--dry-run' && arg !== '--json');
if (unknown.length > 0) {
  console.error(`reconcile: unknown argument '${unknown[0]}' (takes --dry-run, --json)`);
  process.exit(64);
}
const dryRun = args.includes('--dry-run');
const json = args.includes('--json');

void runTask('worker', async (config, logger) => {
  if (!config.DATABASE_URL) throw new ConfigError('DATABASE_URL is required for reconcile');
  if (!config.TEMPORAL_ADDRESS) {
    // The embedded runner keeps no state of its own beside the database: it re-arms every open
    // trade from it on start and every EMBEDDED_TIMER_RESUME_SECONDS, which is this command's job.
    logger.info('TEMPORAL_ADDRESS is unset: the embedded runner reconciles its trades itself on start and every EMBEDDED_TIMER_RESUME_SECONDS; nothing to do');
    return;
  }
  const knex = createKnex(config.DATABASE_URL, 2);
  const orchestrator = await temporalOrchestrator(config, knex, logger, { sweep: false });
  const began = performance.now();
  try {
    const rows = await reconcileTemporalTrades({
      orchestrator, logger, dryRun, taskQueue: config.TEMPORAL_TASK_QUEUE,
      openTrades: () => restorableTrades(knex), storedState: (tradeId) => storedTradeState(knex, tradeId),
    });
    const acted = rows.filter((row) => row.action !== 'none');
    const failed = rows.filter((row) => row.error !== undefined);
    const summary = { compared: rows.length, acted: acted.length, failed: failed.length, dryRun, ms: Math.round(performance.now() - began) };
    if (json) {
      process.stdout.write(`${JSON.stringify({ reconciled: rows, summary })}\n`);
    } else {
      const totals = `${summary.compared} compared, ${summary.acted} ${dryRun ? 'to act on' : 'acted on'}, ${summary.failed} failed, ${summary.ms} ms`;
      process.stdout.write(`${renderTable(rows)}\n${totals}\n`);
    }
    if (failed.length > 0) throw new Error(`${failed.length} trade(s) could not be reconciled (see the table); run again once the cause is fixed`);
  } finally {
    await orchestrator.close();
    await knex.destroy();
  }
});

/** The rows as a fixed-width table, actions first (the trades in line last). */
function renderTable(rows: ReconciledTrade[]): string {
  const sorted = [...rows].sort((a, b) => Number(a.action === 'none') - Number(b.action === 'none'));
  const cells = [['trade', 'database', 'workflow', 'workflow saw', 'action', 'error'],
    ...sorted.map((r) => [r.tradeId, r.database, r.workflow, r.workflowTradeStatus ?? '', r.action, r.error ?? ''])];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
