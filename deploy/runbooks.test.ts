import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Every router registers its paths on import: the document then lists the whole API.
import '../api/app.ts';
import { openApiDocument } from '../api/openapi/document.ts';
import { startJobQueues } from '../db/job-queues.ts';
import { OPERATOR_COMMANDS } from '../operator/cli.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { runTool } from '../test/support/deploy-tools.ts';
import { LIFECYCLE_TASK_QUEUE, PROOFS_TASK_QUEUE, tradeWorkflowId } from '../workflows/temporal/workflows.ts';
import { codeSpans, commandProblems, type DeployedFacts } from './runbook-commands.ts';

/**
 * Every command the runbooks (deploy/README.md "Alerts" and "Operator controls") tell an operator to run,
 * checked against the rendered production overlay, the Temporal settings, the API and the schema: a
 * runbook that names a label no pod has, forgets the namespace, or sends the operator to an endpoint that
 * is not theirs fails here, not at 3 a.m.
 */

const readme = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
const runbooks = readme.slice(readme.indexOf('\n## Alerts\n'), readme.indexOf('\n## Checks (run by `npm test`)'));
const spans = codeSpans(runbooks);

let facts: DeployedFacts;
let db: TestDatabase;

beforeAll(async () => {
  const { status, output } = runTool('kubectl', ['kustomize', 'deploy/k8s/overlays/production']);
  if (status !== 0) throw new Error(`kubectl kustomize failed:\n${output}`);
  const objects = parseAllDocuments(output).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string }; spec?: any; data?: any });
  const deployments = objects.filter((o) => o.kind === 'Deployment');
  const config = objects.find((o) => o.kind === 'ConfigMap')!.data as Record<string, string>;
  const kinds = new Set(objects.map((o) => o.kind.toLowerCase()));
  kinds.add('pod');
  if (kinds.has('scaledobject')) kinds.add('horizontalpodautoscaler'); // KEDA makes the HPA it drives
  const paths = (openApiDocument() as { paths: Record<string, Record<string, unknown>> }).paths;
  facts = {
    namespace: objects.find((o) => o.metadata.namespace)!.metadata.namespace!,
    podLabels: deployments.map((d) => d.spec.template.metadata.labels),
    deployments: deployments.map((d) => d.metadata.name),
    kinds: [...kinds],
    temporalNamespace: config.TEMPORAL_NAMESPACE!,
    taskQueues: [config.TEMPORAL_TASK_QUEUE ?? LIFECYCLE_TASK_QUEUE, PROOFS_TASK_QUEUE],
    workflowIdPattern: new RegExp(`^${tradeWorkflowId('<id>').replace('<id>', '(<id>|[0-9a-f-]{36})')}$`),
    operations: Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)),
    scripts: Object.keys(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts),
    operatorCommands: OPERATOR_COMMANDS,
  };
  db = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

describe('the runbooks\' commands', () => {
  it('every kubectl, temporal, npm run and HTTP command works against the rendered production overlay and the API', () => {
    const checked = commandProblems(spans, facts);
    expect(checked.filter((c) => c.problems.length > 0)).toEqual([]);
    // The check saw them: the runbooks name each kind of command.
    for (const start of ['kubectl -n relayer get pods -l', 'kubectl -n relayer logs -l', 'temporal workflow describe', 'temporal task-queue describe', 'npm run operator -- pause-ad', 'npm run operator -- stop-signing']) {
      expect(checked.some((c) => c.command.startsWith(start)), start).toBe(true);
    }
    expect(checked.length).toBeGreaterThan(15);
    expect(facts.operations).toContain('PATCH /v1/ads/{id}/update');
  });

  it('catches what the runbooks got wrong before: a label no pod has, Temporal without the namespace, the Maker\'s own endpoint', () => {
    const old = commandProblems([
      'kubectl -n relayer get pods -l app=worker',
      'temporal workflow describe -w trade-<id>',
      'PATCH /v1/ads/{id}',
      'kubectl top pods',
      'temporal task-queue describe --namespace relayer --task-queue proof --task-queue-type activity',
      'npm run operator -- pause --reason x',
    ], facts);
    expect(old.map((c) => c.problems)).toEqual([
      ['selector app=worker matches no pod'],
      ['names no --namespace (the overlay\'s is relayer; the CLI\'s default is "default")'],
      ['the API has no PATCH /v1/ads/{id}'],
      ['names no namespace (-n)'],
      ['task queue proof is not one the service uses'],
      ['operator has no command pause'],
    ]);
  });

  it('every SQL statement parses and plans against the migrated schema (tables and columns exist)', async () => {
    // pg-boss's tables, which two statements read, are pg-boss's own: installed as a process would.
    const boss = await startJobQueues({ databaseUrl: db.url, max: 1, logger: pino({ level: 'silent' }), label: 'runbooks', queues: {} });
    await boss.stop({ graceful: false });
    const statements = spans.filter((s) => /^(SELECT|INSERT|UPDATE|DELETE) /.test(s));
    expect(statements.length).toBeGreaterThan(8);
    const problems: string[] = [];
    for (const statement of statements) {
      const runnable = statement.replaceAll("'<id>'", "'00000000-0000-4000-8000-000000000000'").replaceAll('<pid>', '0');
      try {
        await db.knex.raw(`EXPLAIN ${runnable}`);
      } catch (error) {
        problems.push(`${statement}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);
});
