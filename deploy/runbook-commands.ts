/**
 * Checks the commands an operator is told to run in deploy/README.md's runbooks against what is deployed:
 * the rendered manifests (namespace, pod labels, object kinds and names), the Temporal namespace and task
 * queues, the API's paths and methods, the package scripts and the operator's commands. SQL is checked by
 * the test against a migrated database (deploy/runbooks.test.ts). Pure: every fact is passed in.
 */

/** What the commands are checked against. */
export interface DeployedFacts {
  /** The namespace every namespaced object of the production overlay is in. */
  namespace: string;
  /** The labels of each Deployment's pod template, and each Deployment's name. */
  podLabels: Record<string, string>[];
  deployments: string[];
  /** Kinds rendered, lower case (`scaledobject`), plus what they create (`hpa` from a ScaledObject). */
  kinds: string[];
  temporalNamespace: string;
  taskQueues: string[];
  /** `trade-<id>`: the workflow id a trade's workflow has, with `<id>` for the trade id. */
  workflowIdPattern: RegExp;
  /** The API's operations: `GET /v1/trades/{id}`. */
  operations: string[];
  scripts: string[];
  operatorCommands: readonly string[];
}

/** The text of every inline code span in `markdown`, a span broken over lines joined with a space. */
export function codeSpans(markdown: string): string[] {
  return [...markdown.replace(/\r?\n/g, ' ').matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s+/g, ' ').trim());
}

const KIND_ALIASES: Record<string, string> = {
  pod: 'pod', pods: 'pod', deploy: 'deployment', deployment: 'deployment', deployments: 'deployment', scaledobject: 'scaledobject',
  scaledobjects: 'scaledobject', hpa: 'horizontalpodautoscaler', job: 'job', jobs: 'job', svc: 'service', service: 'service', pdb: 'poddisruptionbudget',
};

/** The problems of one kubectl command line (empty: it works against the facts). */
function kubectlProblems(words: string[], facts: DeployedFacts): string[] {
  const problems: string[] = [];
  const ns = words[words.indexOf('-n') + 1] ?? words[words.indexOf('--namespace') + 1];
  if (!words.includes('-n') && !words.includes('--namespace')) problems.push('names no namespace (-n)');
  else if (ns !== facts.namespace) problems.push(`namespace ${ns} is not the overlay's ${facts.namespace}`);
  const selector = words.includes('-l') ? words[words.indexOf('-l') + 1]! : undefined;
  if (selector) {
    const pairs = selector.split(',').map((p) => p.split('='));
    if (!facts.podLabels.some((labels) => pairs.every(([k, v]) => labels[k!] === v))) problems.push(`selector ${selector} matches no pod`);
  }
  const verb = words.find((w, i) => i > 0 && !w.startsWith('-') && words[i - 1] !== '-n' && words[i - 1] !== '-l');
  const valued = ['-n', '-l', '--for', '--timeout'];
  const rest = words.slice(words.indexOf(verb!) + 1).filter((w, i, all) => !w.startsWith('-') && !valued.includes(all[i - 1] ?? ''));
  if (verb === 'get' || verb === 'describe') {
    for (const kind of (rest[0] ?? '').split(',').filter(Boolean)) {
      const known = KIND_ALIASES[kind.split('/')[0]!];
      if (!known || !facts.kinds.includes(known)) problems.push(`kind ${kind} is not deployed`);
    }
  }
  for (const target of rest.filter((w) => /^(deploy|deployment)\//.test(w))) {
    if (!facts.deployments.includes(target.split('/')[1]!)) problems.push(`${target} is not a Deployment of the overlay`);
  }
  return problems;
}

/** The problems of one temporal CLI command line. */
function temporalProblems(words: string[], facts: DeployedFacts): string[] {
  const problems: string[] = [];
  const flag = (...names: string[]) => { for (const n of names) { const at = words.indexOf(n); if (at >= 0) return words[at + 1]; } return undefined; };
  if (['workflow', 'task-queue'].includes(words[1] ?? '')) {
    const namespace = flag('--namespace', '-n');
    if (namespace === undefined) problems.push(`names no --namespace (the overlay's is ${facts.temporalNamespace}; the CLI's default is "default")`);
    else if (namespace !== facts.temporalNamespace) problems.push(`namespace ${namespace} is not the overlay's ${facts.temporalNamespace}`);
  }
  const queue = flag('--task-queue', '-t');
  if (queue !== undefined && !facts.taskQueues.includes(queue)) problems.push(`task queue ${queue} is not one the service uses`);
  const workflow = flag('--workflow-id', '-w');
  if (workflow !== undefined && !facts.workflowIdPattern.test(workflow)) problems.push(`workflow id ${workflow} is not a trade's`);
  return problems;
}

/**
 * Every runnable command among `spans` with what is wrong with it: kubectl, temporal, npm run, and HTTP
 * calls (`PATCH /v1/...`). Spans that are none of these (SQL, metric names) are not returned.
 */
export function commandProblems(spans: string[], facts: DeployedFacts): { command: string; problems: string[] }[] {
  const checked: { command: string; problems: string[] }[] = [];
  for (const command of spans) {
    const words = command.split(' ');
    let problems: string[] | undefined;
    if (words[0] === 'kubectl') problems = kubectlProblems(words, facts);
    else if (words[0] === 'temporal') problems = temporalProblems(words, facts);
    else if (words[0] === 'npm' && words[1] === 'run') {
      problems = facts.scripts.includes(words[2]!) ? [] : [`no package script ${words[2]}`];
      if (words[2] === 'operator' && !facts.operatorCommands.includes(words[4] ?? '')) problems.push(`operator has no command ${words[4]}`);
    } else if (/^(GET|POST|PUT|PATCH|DELETE) \//.test(command)) {
      const operation = words.slice(0, 2).join(' ');
      problems = facts.operations.includes(operation) ? [] : [`the API has no ${operation}`];
    }
    if (problems) checked.push({ command, problems });
  }
  return checked;
}
