// The import rules the README states ("Layout" and "Imports flow one way"), checked by
// test/architecture.test.ts. Test files and test/support are exempt: tests may reach anywhere.
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
    forbid('config-below-everything', 'config.ts and secrets.ts import only the domain.', '^(config|secrets)\\.ts$', '^(?!domain/|config\\.ts|secrets\\.ts)'),
    forbid('db-below-logic', 'db/ knows no chains, proofs, use cases, HTTP or processes.', '^db/', '^(api|runtime|tools|auth|ads|trades|workflows|chains|prover|circuits|registry|deploy)/'),
    forbid('chains-no-db', 'chains/ touches no database, use case or HTTP: callers decide what results mean.', '^chains/', '^(db|api|runtime|tools|auth|ads|trades|workflows|prover|registry|deploy)/'),
    forbid('circuits-are-artifacts', 'circuits/ is the circuit and its artifacts; the prover builds on it, not the reverse.', '^circuits/', '^(db|api|runtime|tools|auth|ads|trades|workflows|prover|chains|registry|deploy)/'),
    forbid('prover-no-upper', 'prover/ is used by workflows and the API, never the reverse.', '^prover/', '^(api|runtime|tools|auth|ads|trades|workflows|chains|registry|deploy)/'),
    forbid('registry-no-upper', 'registry/ (file validation, import, CLI) builds on db and chains only.', '^registry/', '^(api|runtime|tools|auth|ads|trades|workflows|prover|deploy)/'),
    forbid('use-cases-no-http', 'Use cases and workflows know no HTTP, processes or tools.', '^(auth|ads|trades|workflows)/', '^(api|runtime|tools|deploy)/'),
    forbid('api-no-processes', 'api/ builds the app; processes (runtime/) and tools build on it, never the reverse.', '^api/', '^(runtime|tools|deploy)/'),
    forbid('devnet-no-service', 'deploy/devnet is local chains and reference contracts: no service layers.', '^deploy/', '^(api|runtime|tools|auth|ads|trades|workflows|db)/'),
    {
      name: 'temporal-workflow-sandbox',
      comment:
        "Workflow code (workflows/temporal/workflows*.ts) runs in Temporal's deterministic sandbox: no Node built-ins, no " +
        'package but @temporalio/workflow, and of the project only the pure machine, the pure error list, the domain they ' +
        'build on and orchestrator.ts, which declares types only (the activities are proxied by their interface). ' +
        '(dependency-cruiser cannot tell `import type` apart under TypeScript 7, so the allowed files are listed.)',
      severity: 'error',
      from: { path: '^workflows/temporal/workflows[^/]*\\.ts$', pathNot: notTest },
      to: {
        pathNot: '^(workflows/(machine|errors|orchestrator)\\.ts|domain/|node_modules/@temporalio/workflow/)',
      },
    },
    {
      name: 'temporal-workflow-no-builtins',
      comment: 'Not even a type of a Node built-in in workflow code.',
      severity: 'error',
      from: { path: '^workflows/temporal/workflows[^/]*\\.ts$', pathNot: notTest },
      to: { dependencyTypes: ['core'] },
    },
    forbid('nothing-imports-runtime', 'runtime/ is the top: only tools may build on it.', '^(?!runtime/|tools/)', '^runtime/'),
    forbid('runtime-code-no-tests', 'Runtime folders never import test helpers or fixtures.', '^(?!tools/)', '^test/'),
    forbid('nothing-imports-tools', 'tools/ (benchmarks, seed data) is never imported by runtime code.', '^(?!tools/)', '^tools/'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|\\.data|circuits/build|target)' },
    tsPreCompilationDeps: true,
  },
};
