// The import rules the README states ("Layout" and "Imports flow one way": entry points -> api -> use
// cases -> workflows -> prover, chains, db -> domain, config), checked by test/architecture.test.ts and
// `npm run lint:imports`. Test files and test/support are exempt: tests may reach anywhere.
const notTest = '(^test/|\\.test\\.ts$)';

/** A rule: modules matching `from` may import nothing matching `to`. */
const forbid = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from, pathNot: notTest },
  to: { path: to, dependencyTypes: ['local'] },
});

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Imports form no cycle.',
      severity: 'error',
      from: { pathNot: notTest },
      to: { circular: true },
    },
    forbid('domain-is-pure', 'domain/ imports nothing of the project.', '^domain/', '^(?!domain/)[^/]+'),
    forbid('config-below-everything', 'config/ (settings and secrets) imports only the domain, and the trade windows it takes its defaults and bounds from (trades/lifecycle/windows.ts: pure, imports only the domain).', '^config/', '^(?!domain/|config/|trades/lifecycle/(windows|unlock-order|machine)\\.ts$)'),
    forbid('db-below-logic', 'db/ knows no chains, proofs, use cases, HTTP or processes.', '^db/', `^(api|entrypoints|tools|audit|auth|ads|trades|webhooks|workflows|chains|prover|circuits|registry|contracts|devnet|deploy)/`),
    forbid('chains-no-db', 'chains/ touches no database, use case or HTTP: callers decide what results mean.', '^chains/', '^(db|api|entrypoints|tools|auth|ads|trades|workflows|prover|registry|contracts|devnet|deploy)/'),
    forbid('circuits-are-artifacts', 'circuits/ is the circuit and its artifacts; the prover builds on it, not the reverse.', '^circuits/', '^(db|api|entrypoints|tools|auth|ads|trades|workflows|prover|chains|registry|contracts|devnet|deploy)/'),
    forbid('prover-no-upper', 'prover/ is used by the trades and the orchestrators, never the reverse.', '^prover/', '^(api|entrypoints|tools|auth|ads|trades|workflows|chains|registry|contracts|devnet|deploy)/'),
    forbid('registry-no-upper', 'registry/ (file validation, import, CLI) builds on db and chains only.', '^registry/', '^(api|entrypoints|tools|auth|ads|trades|workflows|prover|contracts|devnet|deploy)/'),
    forbid('use-cases-no-http', 'Use cases (auth, ads, trades, webhooks) know no HTTP, orchestrator, process or tool.', '^(auth|ads|trades|webhooks)/', '^(api|entrypoints|tools|workflows|contracts|devnet|deploy)/'),
    forbid('use-cases-apart', 'No use case imports another: auth, ads and trades each stand alone (the ad ledger is ads/ledger.ts, shared through db).', '^auth/', '^(ads|trades)/'),
    forbid('webhooks-apart', 'webhooks/ delivers what the outbox holds (db); it imports no other use case, and none imports it.', '^webhooks/', '^(auth|ads|trades)/'),
    forbid('use-cases-not-webhooks', 'No other use case or orchestrator imports webhooks/.', '^(auth|ads|trades|workflows|chains|prover|registry)/', '^webhooks/'),
    forbid('ads-not-trades', 'ads/ never imports trades/.', '^ads/', '^(auth|trades)/'),
    forbid('trades-only-ad-ledger', 'trades/ reach ads only through the ads port (ads/port.ts: the ad locked, its lapsed holds settled, a reservation, a trade\'s ledger operations), with the pure ledger (ledger.ts) and errors.ts; never its use cases, request machine or repositories\' wrappers.', '^trades/', '^(auth/|ads/(?!(port|ledger|errors)\\.ts))'),
    forbid('audit-beside-use-cases', 'audit/ (the books against the chains) builds on the ads and trades use cases, chains and db; it knows no HTTP, orchestrator or process.', '^audit/', '^(api|entrypoints|tools|auth|workflows|contracts|devnet|deploy)/'),
    forbid('nothing-below-imports-audit', 'Only the entry points (which schedule it) and tools use audit/.', '^(?!entrypoints/|tools/|audit/)', '^audit/'),
    forbid('orchestrators-carry-out', 'workflows/ (the orchestrators) carry out the lifecycle of trades/; they know no HTTP, process, ads or auth.', '^workflows/', '^(api|entrypoints|tools|auth|ads|contracts|devnet|deploy)/'),
    forbid('api-no-processes', 'api/ builds the app; the entry points and tools build on it, never the reverse.', '^api/', '^(entrypoints|tools|contracts|devnet|deploy)/'),
    forbid('contracts-alone', 'contracts/ (Solidity, Soroban, their compilers and tests) import no service layer; their test vectors are made with the prover and the devnet\'s well-known accounts.', '^contracts/', '^(api|entrypoints|tools|auth|ads|trades|workflows|db|registry|deploy|devnet/(?!accounts\\.ts))'),
    forbid('devnet-no-service', 'devnet/ is local chains: contracts, chains and config, no service layers.', '^devnet/', '^(api|entrypoints|tools|auth|ads|trades|workflows|db|deploy)/'),
    forbid('deploy-no-service', 'deploy/ describes how to run the service; its generators import no service code.', '^deploy/', '^(api|entrypoints|auth|ads|trades|workflows|db|prover|registry|devnet)/'),
    {
      name: 'temporal-workflow-sandbox',
      comment:
        "Workflow code (workflows/temporal/workflows*.ts) runs in Temporal's deterministic sandbox: no Node built-ins, no " +
        'package but @temporalio/workflow, and of the project only the pure lifecycle (trades/lifecycle/, its error list included), the domain it ' +
        'build on and trades/orchestrator.ts, which declares types only (the activities are proxied by their interface). ' +
        '(dependency-cruiser cannot tell `import type` apart under TypeScript 7, so the allowed files are listed.)',
      severity: 'error',
      from: { path: '^workflows/temporal/workflows[^/]*\\.ts$', pathNot: notTest },
      to: {
        pathNot: '^(trades/lifecycle/[^/]+\\.ts|trades/orchestrator\\.ts|domain/|node_modules/@temporalio/workflow/)',
      },
    },
    {
      name: 'temporal-workflow-no-builtins',
      comment: 'Not even a type of a Node built-in in workflow code.',
      severity: 'error',
      from: { path: '^workflows/temporal/workflows[^/]*\\.ts$', pathNot: notTest },
      to: { dependencyTypes: ['core'] },
    },
    forbid('nothing-imports-api', 'api/ is HTTP only: only the entry points build on it (and the build tools: tools/, the client generator that reads the OpenAPI document).', '^(?!api/|entrypoints/|tools/|client/generate\\.ts$)', '^api/'),
    {
      name: 'lifecycle-is-pure',
      comment: 'trades/lifecycle/ (every decision of a trade) imports only the domain and itself: no package, no Node built-in, no chain, db or use case, so both orchestrators and Temporal\'s sandbox run the same decisions.',
      severity: 'error',
      from: { path: '^trades/lifecycle/', pathNot: notTest },
      to: { pathNot: '^(domain|trades/lifecycle)/' },
    },
    forbid('workflows-through-the-port', 'workflows/ reach trades only through the lifecycle (trades/lifecycle/) and the orchestrator port (trades/orchestrator.ts): no use case, activity or repository of trades.', '^workflows/', '^trades/(?!lifecycle/|orchestrator\\.ts$)'),
    {
      name: 'sql-only-in-db',
      comment: 'The PostgreSQL drivers (pg, pg-boss) are db/\'s alone (tools may use them): all SQL lives in db/. (Outside db/, knex is imported for its types only; the SQL text itself is checked by test/architecture.test.ts.)',
      severity: 'error',
      from: { pathNot: `${notTest}|^(db|tools)/` },
      to: { path: '(^|/)node_modules/(pg|pg-boss)/', dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'] },
    },
    forbid('nothing-imports-entrypoints', 'entrypoints/ is the top: only tools may build on it.', '^(?!entrypoints/|tools/)', '^entrypoints/'),
    forbid('runtime-code-no-tests', 'Runtime folders never import test helpers or fixtures.', '^(?!tools/)', '^test/'),
    forbid('nothing-imports-tools', 'tools/ (benchmarks, seed data) is never imported by runtime code.', '^(?!tools/)', '^tools/'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.data|circuits/build|target)' },
    tsPreCompilationDeps: true,
  },
};
