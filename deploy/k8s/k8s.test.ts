import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool } from '../../test/support/deploy-tools.ts';
import { podMonitorProblems, prometheusRuleProblems, scaledObjectProblems, triggerAuthenticationProblems } from './crd-schema.ts';
import { prometheusRuleText } from '../prometheus/build.ts';
import { configSettings as knownSettings } from '../../test/support/known-names.ts';
import { loadConfig } from '../../config/config.ts';
import { resolveSecrets } from '../../config/secrets.ts';
import { temporalConnectOptions } from '../../workflows/temporal/connection-options.ts';

/**
 * Both production overlays rendered by `kubectl kustomize` and checked object by object: what
 * runs, as whom, with which probes, resources and settings.
 */

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: any; data?: Record<string, string> };

function render(dir: string): K8sObject[] {
  const { status, output } = runTool('kubectl', ['kustomize', dir]);
  if (status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${output}`);
  return parseAllDocuments(output).map((doc) => doc.toJS() as K8sObject);
}

const overlays = ['deploy/k8s/overlays/production', 'deploy/k8s/overlays/production-hpa'] as const;
const rendered = new Map<string, K8sObject[]>();
beforeAll(() => {
  for (const overlay of [...overlays, 'deploy/k8s/base']) rendered.set(overlay, render(overlay));
});

const workloads = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

describe.each(overlays)('%s', (overlay) => {
  const objects = () => rendered.get(overlay)!;

  it('runs api, worker and prover Deployments and the migration Job, each with its command', () => {
    const commands = Object.fromEntries(workloads(objects()).map((w) => [w.metadata.name, w.spec.template.spec.containers[0].args]));
    expect(commands).toEqual({ 'relayer-api': ['api'], 'relayer-worker': ['worker'], 'relayer-prover': ['prover'], 'relayer-migrate': ['migrate'] });
  });

  it('puts every namespaced object in the relayer namespace', () => {
    for (const object of objects()) expect(object.metadata.namespace, `${object.kind}/${object.metadata.name}`).toBe('relayer');
  });

  it('runs every container from the release image, pinned, as a non-root user on a read-only root filesystem', () => {
    for (const workload of workloads(objects())) {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: expect.any(Number) });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        const where = `${workload.metadata.name}/${container.name}`;
        // By digest: a tag can be moved under a running Deployment, a digest cannot.
        expect(container.image, where).toMatch(/^registry\.example\.com\/relayer\/relayer@sha256:[0-9a-f]{64}$/);
        expect(container.securityContext, where).toMatchObject({
          allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] },
        });
        // The only writable place (npm and tsx caches) is an emptyDir on /tmp; the api also reads the HSM's
        // library and PIN (components/pkcs11-signer), read-only.
        const hsm = workload.metadata.name === 'relayer-api'
          ? [{ name: 'pkcs11-module', mountPath: '/opt/pkcs11', readOnly: true }, { name: 'pkcs11-pin', mountPath: '/etc/pkcs11-pin', readOnly: true }]
          : [];
        expect(container.volumeMounts, where).toEqual([{ name: 'tmp', mountPath: '/tmp' }, ...hsm]);
        expect(pod.volumes.find((v: any) => v.name === 'tmp'), where).toMatchObject({ emptyDir: {} });
      }
    }
  });

  it('gives every container resource requests and limits', () => {
    for (const workload of workloads(objects())) {
      for (const container of workload.spec.template.spec.containers) {
        expect(container.resources.requests, workload.metadata.name).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
        expect(container.resources.limits, workload.metadata.name).toMatchObject({ cpu: expect.anything(), memory: expect.anything() });
      }
    }
  });

  it('probes the api on /health (readiness, start-up) and exposes it through a Service', () => {
    const api = named(objects(), 'Deployment', 'relayer-api')!.spec.template.spec.containers[0];
    for (const probe of ['readinessProbe', 'startupProbe']) expect(api[probe].httpGet, probe).toEqual({ path: '/health', port: 'http' });
    expect(api.livenessProbe.failureThreshold * api.livenessProbe.periodSeconds).toBeGreaterThan(api.readinessProbe.failureThreshold * api.readinessProbe.periodSeconds);
    const service = named(objects(), 'Service', 'relayer-api')!;
    expect(service.spec.selector).toEqual({ 'app.kubernetes.io/name': 'relayer-api' });
    expect(service.spec.ports).toEqual([expect.objectContaining({ targetPort: 'http' })]);
  });

  it('probes worker and prover on /health of their metrics port, and every pod is scraped on METRICS_PORT', () => {
    const metricsPort = Number(objects().find((o) => o.kind === 'ConfigMap')!.data!.METRICS_PORT);
    expect(metricsPort).toBeGreaterThan(0);
    for (const name of ['relayer-worker', 'relayer-prover']) {
      const container = named(objects(), 'Deployment', name)!.spec.template.spec.containers[0];
      expect(container.readinessProbe.httpGet, name).toEqual({ path: '/health', port: 'metrics' });
      expect(container.livenessProbe.httpGet, name).toEqual({ path: '/health', port: 'metrics' });
    }
    for (const deployment of objects().filter((o) => o.kind === 'Deployment')) {
      const template = deployment.spec.template;
      expect(template.metadata.annotations, deployment.metadata.name).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(metricsPort), 'prometheus.io/path': '/metrics' });
      expect(template.spec.containers[0].ports, deployment.metadata.name).toContainEqual({ name: 'metrics', containerPort: metricsPort });
    }
  });

  it('has a disruption budget for each Deployment, selecting its pods', () => {
    for (const deployment of objects().filter((o) => o.kind === 'Deployment')) {
      const budget = named(objects(), 'PodDisruptionBudget', deployment.metadata.name);
      expect(budget, deployment.metadata.name).toBeDefined();
      expect(budget!.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    }
  });

  it('configures every workload from the ConfigMap and the Secret with settings config.ts knows', () => {
    const configMaps = objects().filter((o) => o.kind === 'ConfigMap');
    expect(configMaps).toHaveLength(1);
    for (const key of Object.keys(configMaps[0]!.data!)) expect(knownSettings, `ConfigMap key ${key}`).toContain(key);
    for (const workload of workloads(objects())) {
      const container = workload.spec.template.spec.containers[0];
      expect(container.envFrom).toEqual([{ configMapRef: { name: configMaps[0]!.metadata.name } }]);
      const names = container.env.map((e: { name: string }) => e.name);
      // Besides config.ts's settings: OpenTelemetry's standard resource attributes and the pod facts they name.
      for (const name of names.filter((n: string) => !/^(OTEL_RESOURCE_ATTRIBUTES|K8S_(POD|NAMESPACE|NODE)_NAME)$/.test(n))) {
        expect(knownSettings, `${workload.metadata.name} env ${name}`).toContain(name);
      }
      expect(container.env.find((e: any) => e.name === 'DATABASE_URL')?.valueFrom, `${workload.metadata.name} DATABASE_URL`)
        .toEqual({ secretKeyRef: { name: `${workload.metadata.name}-secrets`, key: 'DATABASE_URL' } });
    }
    expect(configMaps[0]!.data).toMatchObject({ NODE_ENV: 'production', TEMPORAL_ADDRESS: expect.stringMatching(/:7233$/) });
    // No secret value in a ConfigMap, and no Secret object rendered at all: each is created out of band.
    expect(objects().some((o) => o.kind === 'Secret')).toBe(false);
    for (const key of Object.keys(configMaps[0]!.data!)) expect(key).not.toMatch(/SECRET|PRIVATE_KEY|PASSWORD|DATABASE_URL/);
  });

  it('mounts in each workload only its own role\'s Secret, and no SEP-10 or JWT key outside the api', () => {
    const signingKeys = ['JWT_SECRET', 'SEP10_SIGNING_SECRET'];
    const all = workloads(objects());
    expect(all.map((w) => w.metadata.name).sort()).toEqual(['relayer-api', 'relayer-migrate', 'relayer-prover', 'relayer-worker']);
    for (const workload of all) {
      const spec = workload.spec.template.spec;
      const own = `${workload.metadata.name}-secrets`;
      // Every reference to a relayer-*-secrets Secret, wherever in the pod (env, envFrom, volumes), names the workload's own.
      const referenced = [...JSON.stringify(spec).matchAll(/"(relayer-[a-z]+-secrets)"/g)].map((m) => m[1]);
      expect(new Set(referenced), workload.metadata.name).toEqual(new Set([own]));
      const env = spec.containers[0].env as { name: string; valueFrom?: unknown }[];
      for (const key of signingKeys) {
        const held = env.find((e) => e.name === key);
        if (workload.metadata.name === 'relayer-api') expect(held?.valueFrom, key).toEqual({ secretKeyRef: { name: own, key } });
        else expect(held, `${workload.metadata.name} ${key}`).toBeUndefined();
      }
    }
  });

  it('signs with the HSM: RELAYER_SIGNER=pkcs11, no RELAYER_SIGNER_ALLOW_ENV, no raw relayer key anywhere, the PIN a file from the api\'s Secret', () => {
    const config = objects().find((o) => o.kind === 'ConfigMap')!.data!;
    expect(config.RELAYER_SIGNER).toBe('pkcs11');
    expect(config).not.toHaveProperty('RELAYER_SIGNER_ALLOW_ENV');
    expect(config).not.toHaveProperty('PKCS11_PIN');
    // Not a key, not a reference to one: the names of the raw keys appear nowhere in what is applied.
    const text = JSON.stringify(objects());
    for (const key of ['RELAYER_EVM_PRIVATE_KEY', 'RELAYER_STELLAR_SECRET', 'RELAYER_EVM_PREVIOUS_PRIVATE_KEY', 'RELAYER_STELLAR_PREVIOUS_SECRET', 'RELAYER_SIGNER_ALLOW_ENV']) {
      expect(text, key).not.toContain(key);
    }
    const api = named(objects(), 'Deployment', 'relayer-api')!.spec.template.spec;
    expect(api.volumes).toContainEqual({ name: 'pkcs11-pin', secret: { secretName: 'relayer-api-secrets', items: [{ key: 'PKCS11_PIN', path: 'pin' }], defaultMode: 0o440 } });
    expect(config.PKCS11_PIN_FILE).toBe('/etc/pkcs11-pin/pin');
    // The token's library: an image volume pinned by digest, at the path PKCS11_MODULE names.
    const module = api.volumes.find((v: any) => v.name === 'pkcs11-module');
    expect(module.image.reference).toMatch(/^[\w.\/-]+@sha256:[0-9a-f]{64}$/);
    expect(config.PKCS11_MODULE).toMatch(/^\/opt\/pkcs11\//);
    for (const name of ['relayer-worker', 'relayer-prover']) {
      expect(JSON.stringify(named(objects(), 'Deployment', name)), name).not.toMatch(/pkcs11/i);
    }
    expect(JSON.stringify(named(objects(), 'Job', 'relayer-migrate'))).not.toMatch(/pkcs11/i);
    // The api starts on this configuration (config.ts): every PKCS11_* setting present, one PIN source.
    const pinDir = mkdtempSync(path.join(scratch, 'pin-'));
    const apiEnv: Record<string, string> = { ...config, PKCS11_PIN_FILE: path.join(pinDir, 'pin') };
    writeFileSync(apiEnv.PKCS11_PIN_FILE!, '1234\n');
    // What relayer-api-secrets holds besides the PIN, in the formats config.ts checks (fixed values).
    const secretValues: Record<string, string> = {
      DATABASE_URL: 'postgres://relayer@postgres:5432/relayer',
      JWT_SECRET: createHash('sha256').update('k8s.test jwt').digest('hex'),
      SEP10_SIGNING_SECRET: Keypair.fromRawEd25519Seed(createHash('sha256').update('k8s.test sep10').digest()).secret(),
    };
    for (const entry of api.containers[0].env as { name: string; value?: string }[]) apiEnv[entry.name] = entry.value ?? secretValues[entry.name]!;
    const settings = loadConfig(apiEnv, 'api');
    expect(settings.RELAYER_SIGNER).toBe('pkcs11');
    expect(resolveSecrets(settings, 'api').pkcs11Pin).toBe('1234');
  });

  it('checks the api\'s liveness on /live of its metrics port, which touches no database (api/database-outage.test.ts sees it 200 with PostgreSQL stopped)', () => {
    const api = named(objects(), 'Deployment', 'relayer-api')!.spec.template.spec.containers[0];
    expect(api.livenessProbe.httpGet).toEqual({ path: '/live', port: 'metrics' });
    expect(api.ports).toContainEqual(expect.objectContaining({ name: 'metrics' }));
  });

  it('sets no replicas on a Deployment an autoscaler scales (an apply would reset what it scaled)', () => {
    const scaled = objects().flatMap((o) => o.kind === 'ScaledObject' || o.kind === 'HorizontalPodAutoscaler' ? [o.spec.scaleTargetRef.name as string] : []);
    expect(scaled).toEqual(['relayer-prover']);
    for (const name of scaled) expect(named(objects(), 'Deployment', name)!.spec, name).not.toHaveProperty('replicas');
  });

  it('every Deployment waits in preStop, then has a grace period covering the wait and its drain, and spreads over nodes and zones', () => {
    // The drain each process does on SIGTERM: the API's 5 s of in-flight requests
    // (entrypoints/http-server.ts), the Temporal workers' 10 s shutdownGraceTime (workflows/temporal/worker.ts).
    const drainSeconds: Record<string, number> = { 'relayer-api': 5, 'relayer-worker': 10, 'relayer-prover': 10 };
    for (const deployment of objects().filter((o) => o.kind === 'Deployment')) {
      const name = deployment.metadata.name;
      const pod = deployment.spec.template.spec;
      const wait = pod.containers[0].lifecycle?.preStop?.sleep?.seconds;
      expect(wait, `${name} preStop sleep`).toBeGreaterThanOrEqual(5);
      expect(pod.terminationGracePeriodSeconds, name).toBeGreaterThanOrEqual(wait + drainSeconds[name]! + 10);
      const spread = pod.topologySpreadConstraints ?? [];
      expect(spread.map((c: any) => c.topologyKey).sort(), name).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
      for (const constraint of spread) expect(constraint.labelSelector.matchLabels, name).toEqual(deployment.spec.selector.matchLabels);
    }
  });

  it('denies all traffic by default and allows each role only what it talks to', () => {
    const policies = objects().filter((o) => o.kind === 'NetworkPolicy');
    const deny = policies.find((p) => Object.keys(p.spec.podSelector).length === 0 && !p.spec.ingress && !p.spec.egress);
    expect(deny?.spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
    /** The policies that select pods labelled `role`. */
    const selecting = (role: string) => policies.filter((p) => {
      const selector = p.spec.podSelector;
      if (selector.matchLabels) return selector.matchLabels['app.kubernetes.io/name'] === role;
      if (selector.matchExpressions) return selector.matchExpressions.some((e: any) => e.key === 'app.kubernetes.io/name' && e.operator === 'In' && e.values.includes(role));
      return true;
    });
    const ports = (role: string, direction: 'egress' | 'ingress') =>
      [...new Set(selecting(role).flatMap((p) => (p.spec[direction] ?? []).flatMap((rule: any) => (rule.ports ?? []).map((port: any) => `${port.protocol}/${port.port}`))))].sort();
    // DNS, PostgreSQL, Temporal, chain RPC / webhooks over HTTPS (see networkpolicy.yaml for who uses what).
    expect(ports('relayer-api', 'egress')).toEqual(['TCP/443', 'TCP/53', 'TCP/5432', 'TCP/7233', 'UDP/53']);
    expect(ports('relayer-worker', 'egress')).toEqual(['TCP/443', 'TCP/53', 'TCP/5432', 'TCP/7233', 'UDP/53']);
    expect(ports('relayer-prover', 'egress')).toEqual(['TCP/443', 'TCP/53', 'TCP/5432', 'TCP/7233', 'UDP/53']);
    expect(ports('relayer-migrate', 'egress')).toEqual(['TCP/53', 'TCP/5432', 'UDP/53']);
    expect(ports('relayer-api', 'ingress')).toEqual(['TCP/http', 'TCP/metrics']);
    expect(ports('relayer-worker', 'ingress')).toEqual(['TCP/metrics']);
    expect(ports('relayer-prover', 'ingress')).toEqual(['TCP/metrics']);
    expect(ports('relayer-migrate', 'ingress')).toEqual([]);
    // Temporal only in its namespace; the metrics port only from the monitoring namespace.
    const temporal = policies.find((p) => p.spec.egress?.some((r: any) => r.ports?.some((port: any) => port.port === 7233)))!;
    expect(temporal.spec.egress[0].to).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'temporal' } } }]);
    const metrics = policies.find((p) => p.spec.ingress?.some((r: any) => r.ports?.some((port: any) => port.port === 'metrics')))!;
    expect(metrics.spec.ingress[0].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
  });

  it('keeps the sum of every process\'s PostgreSQL connections at its most pods (rollout surge included) under max_connections', () => {
    const budget = connectionBudget(objects());
    expect(budget.total, JSON.stringify(budget.roles)).toBeLessThanOrEqual(postgresMaxConnections - postgresReservedConnections);
    // Each process sizes its own pool: none takes the one-size default from the ConfigMap.
    expect(objects().find((o) => o.kind === 'ConfigMap')!.data).not.toHaveProperty('DB_POOL_MAX');
  });

  it('sizes the prover pool to the prover pod\'s CPU request', () => {
    const prover = named(objects(), 'Deployment', 'relayer-prover')!.spec.template.spec.containers[0];
    expect(prover.env.find((e: any) => e.name === 'PROVER_POOL_SIZE').valueFrom).toEqual({ resourceFieldRef: { resource: 'requests.cpu', divisor: '1' } });
  });
});

describe('prover autoscaling', () => {
  it('production scales provers with KEDA on the Temporal proofs task queue, and nothing else scales them', () => {
    const objects = rendered.get('deploy/k8s/overlays/production')!;
    const scaler = named(objects, 'ScaledObject', 'relayer-prover')!;
    expect(scaler.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaler.spec.scaleTargetRef).toEqual({ name: 'relayer-prover' });
    expect(scaler.spec.triggers).toEqual([{ type: 'temporal', metadata: expect.objectContaining({ taskQueue: 'proofs', queueTypes: 'activity', namespace: 'relayer' }) }]);
    const config = objects.find((o) => o.kind === 'ConfigMap')!.data!;
    expect(scaler.spec.triggers[0].metadata.endpoint).toBe(config.TEMPORAL_ADDRESS);
    expect(config.TEMPORAL_NAMESPACE).toBe('relayer');
    expect(objects.some((o) => o.kind === 'HorizontalPodAutoscaler')).toBe(false);
  });

  it('production-hpa scales provers with an HPA on CPU instead of KEDA', () => {
    const objects = rendered.get('deploy/k8s/overlays/production-hpa')!;
    expect(objects.some((o) => o.kind === 'ScaledObject')).toBe(false);
    const hpa = named(objects, 'HorizontalPodAutoscaler', 'relayer-prover')!;
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'relayer-prover' });
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
  });

  it('the base alone scales nothing and pins no image (overlays do)', () => {
    const objects = rendered.get('deploy/k8s/base')!;
    expect(objects.some((o) => o.kind === 'ScaledObject' || o.kind === 'HorizontalPodAutoscaler')).toBe(false);
    for (const workload of workloads(objects)) expect(workload.spec.template.spec.containers[0].image).toBe('relayer');
  });
});

describe('monitoring with the Prometheus Operator', () => {
  const prometheusJobs = (parse(readFileSync(new URL('../prometheus/prometheus.yml', import.meta.url), 'utf8')).scrape_configs as { job_name: string }[]).map((j) => j.job_name);

  it.each(overlays)('%s: a PodMonitor scrapes every Deployment\'s pods on their metrics port, one job per process named as the compose config names it', (overlay) => {
    const objects = rendered.get(overlay)!;
    const monitor = named(objects, 'PodMonitor', 'relayer')!;
    expect(monitor.metadata.namespace).toBe('relayer');
    const [endpoint] = monitor.spec.podMetricsEndpoints;
    expect(monitor.spec.podMetricsEndpoints).toHaveLength(1);
    // The job is the pod's app.kubernetes.io/name: relayer-api, relayer-worker, relayer-prover.
    expect(endpoint.relabelings).toContainEqual({ sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_name'], targetLabel: 'job' });
    const selected = monitor.spec.selector.matchExpressions[0];
    expect(selected).toMatchObject({ key: 'app.kubernetes.io/name', operator: 'In' });
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    expect([...selected.values].sort()).toEqual(deployments.map((d) => d.metadata.name).sort());
    for (const deployment of deployments) {
      const template = deployment.spec.template;
      const job = template.metadata.labels['app.kubernetes.io/name'];
      expect(selected.values, deployment.metadata.name).toContain(job);
      expect(prometheusJobs, `${job} is a job of deploy/prometheus/prometheus.yml`).toContain(job);
      expect(template.spec.containers[0].ports.map((p: { name: string }) => p.name), deployment.metadata.name).toContain(endpoint.port);
      // The same path the annotations name for annotation-based scraping.
      expect(endpoint.path).toBe(template.metadata.annotations['prometheus.io/path']);
    }
  });

  it.each(overlays)('%s: a PrometheusRule carries exactly deploy/prometheus/alerts.yml (npm run rules:build), which promtool accepts', (overlay) => {
    const rule = named(rendered.get(overlay)!, 'PrometheusRule', 'relayer')!;
    const alertsYaml = readFileSync(new URL('../prometheus/alerts.yml', import.meta.url), 'utf8');
    expect(rule.spec.groups).toEqual(parse(alertsYaml).groups);
    expect(readFileSync(new URL('./base/prometheusrule.yaml', import.meta.url), 'utf8')).toBe(prometheusRuleText(alertsYaml));
    const file = path.join(scratch, `rules-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(file, stringify({ groups: rule.spec.groups }));
    const { status, output } = runTool('promtool', ['check', 'rules', file]);
    expect(output).toContain('SUCCESS');
    expect(status).toBe(0);
  });
});

/** PostgreSQL's max_connections and superuser_reserved_connections as deploy/README.md "Connection budget" states them. */
const deployReadme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const postgresMaxConnections = Number(/max_connections` of (\d+)/.exec(deployReadme)![1]);
const postgresReservedConnections = Number(/(\d+) reserved for superusers/.exec(deployReadme)![1]);
/**
 * Connections a process holds beyond its knex pool (DB_POOL_MAX): the API's one LISTEN connection
 * (db/notifications.ts: the event streams' news and the operator's signing switch); the worker's pg-boss pools for webhooks (2) and the books audit (2)
 * and the trade gauges' leader-lock session (1).
 */
const connectionsBeyondPool: Record<string, number> = { 'relayer-api': 1, 'relayer-worker': 5, 'relayer-prover': 0, 'relayer-migrate': 0 };

/** PostgreSQL connections of each workload at its most pods (autoscaler maximum, plus the rollout's surge), and their sum. */
function connectionBudget(objects: K8sObject[]): { total: number; roles: Record<string, { pods: number; each: number }> } {
  const config = objects.find((o) => o.kind === 'ConfigMap')!.data!;
  const roles: Record<string, { pods: number; each: number }> = {};
  for (const workload of workloads(objects)) {
    const name = workload.metadata.name;
    // The relayer's own processes; PgBouncer (components/pgbouncer) is counted by its own test.
    if (!(name in connectionsBeyondPool)) continue;
    const env = workload.spec.template.spec.containers[0].env as { name: string; value?: string }[];
    const pool = Number(env.find((e) => e.name === 'DB_POOL_MAX')?.value ?? config.DB_POOL_MAX ?? 10);
    const scaler = objects.find((o) => (o.kind === 'ScaledObject' || o.kind === 'HorizontalPodAutoscaler') && o.spec.scaleTargetRef.name === name);
    let pods = workload.kind === 'Job' ? 1 : scaler ? (scaler.spec.maxReplicaCount ?? scaler.spec.maxReplicas) : (workload.spec.replicas ?? 1);
    if (workload.kind === 'Deployment') {
      const surge = workload.spec.strategy?.rollingUpdate?.maxSurge ?? '25%';
      pods += typeof surge === 'number' ? surge : Math.ceil((pods * Number.parseInt(surge, 10)) / 100);
    }
    roles[name] = { pods, each: pool + connectionsBeyondPool[name]! };
  }
  return { total: Object.values(roles).reduce((sum, r) => sum + r.pods * r.each, 0), roles };
}

/** The production overlay with a component of deploy/k8s/components added, as an overlay would add it. */
function renderWithComponent(component: string): K8sObject[] {
  const dir = mkdtempSync(path.join(scratch, 'overlay-'));
  const relative = (to: string) => path.relative(dir, path.resolve(to));
  writeFileSync(path.join(dir, 'kustomization.yaml'), stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', namespace: 'relayer',
    resources: [relative('deploy/k8s/overlays/production')], components: [relative(`deploy/k8s/components/${component}`)],
  }));
  return render(dir);
}

describe('the signer components', () => {
  it('env-signer (staging without an HSM) gives only the api the raw keys from its Secret and says so with RELAYER_SIGNER_ALLOW_ENV', () => {
    const dir = mkdtempSync(path.join(scratch, 'staging-'));
    const relative = (to: string) => path.relative(dir, path.resolve(to));
    writeFileSync(path.join(dir, 'kustomization.yaml'), stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', namespace: 'relayer-staging',
      resources: [relative('deploy/k8s/base')], components: [relative('deploy/k8s/components/env-signer')],
    }));
    const objects = render(dir);
    expect(objects.find((o) => o.kind === 'ConfigMap')!.data).toMatchObject({ RELAYER_SIGNER: 'env', RELAYER_SIGNER_ALLOW_ENV: 'true' });
    const env = named(objects, 'Deployment', 'relayer-api')!.spec.template.spec.containers[0].env;
    for (const key of ['RELAYER_EVM_PRIVATE_KEY', 'RELAYER_STELLAR_SECRET']) {
      expect(env, key).toContainEqual({ name: key, valueFrom: { secretKeyRef: { name: 'relayer-api-secrets', key } } });
      for (const name of ['relayer-worker', 'relayer-prover']) expect(JSON.stringify(named(objects, 'Deployment', name)), name).not.toContain(key);
    }
  });

  it('the base alone picks no signer, so production refuses to start the api until an overlay does', () => {
    const config = rendered.get('deploy/k8s/base')!.find((o) => o.kind === 'ConfigMap')!.data!;
    expect(config).not.toHaveProperty('RELAYER_SIGNER');
    expect(() => loadConfig({ ...config, JWT_SECRET: 'x'.repeat(40) })).toThrow(/RELAYER_SIGNER: is env/);
  });
});

describe('Temporal over TLS or with an API key (deploy/k8s/components)', () => {
  const temporalPods = ['relayer-api', 'relayer-worker', 'relayer-prover'];

  it('temporal-mtls mounts the client pair and CA in every Temporal client\'s pod, names them in the ConfigMap, and gives KEDA\'s trigger the same', () => {
    const objects = renderWithComponent('temporal-mtls');
    const config = objects.find((o) => o.kind === 'ConfigMap')!.data!;
    expect(config).toMatchObject({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: '/etc/temporal-tls/ca.crt', TEMPORAL_TLS_CERT: '/etc/temporal-tls/tls.crt', TEMPORAL_TLS_KEY: '/etc/temporal-tls/tls.key' });
    for (const key of Object.keys(config)) expect(knownSettings, key).toContain(key);
    for (const name of temporalPods) {
      const pod = named(objects, 'Deployment', name)!.spec.template.spec;
      expect(pod.volumes, name).toContainEqual({ name: 'temporal-tls', secret: { secretName: 'relayer-temporal-mtls', defaultMode: 0o440 } });
      expect(pod.containers[0].volumeMounts, name).toContainEqual({ name: 'temporal-tls', mountPath: '/etc/temporal-tls', readOnly: true });
    }
    const scaler = named(objects, 'ScaledObject', 'relayer-prover')!;
    expect(scaler.spec.triggers[0].authenticationRef).toEqual({ name: 'relayer-temporal' });
    const auth = named(objects, 'TriggerAuthentication', 'relayer-temporal')!;
    expect(auth.metadata.namespace).toBe('relayer');
    expect(auth.spec.secretTargetRef.map((r: any) => [r.parameter, r.name, r.key])).toEqual([
      ['ca', 'relayer-temporal-mtls', 'ca.crt'], ['cert', 'relayer-temporal-mtls', 'tls.crt'], ['key', 'relayer-temporal-mtls', 'tls.key'],
    ]);
    expect(triggerAuthenticationProblems(auth)).toEqual([]);
    const misspelt = structuredClone(auth);
    misspelt.spec.secretTargetRef[0].paramter = 'ca';
    expect(triggerAuthenticationProblems(misspelt)).toContain('TriggerAuthentication.spec.secretTargetRef[0].paramter: unknown field');
    expect(scaledObjectProblems(scaler)).toEqual([]);
    expect(strictProblems(builtIn(objects))).toEqual([]);
  });

  it('temporal-api-key gives every Temporal client\'s pod and KEDA\'s trigger the API key from its Secret, over TLS', () => {
    const objects = renderWithComponent('temporal-api-key');
    expect(objects.find((o) => o.kind === 'ConfigMap')!.data).toMatchObject({ TEMPORAL_TLS: 'true' });
    for (const name of temporalPods) {
      const env = named(objects, 'Deployment', name)!.spec.template.spec.containers[0].env;
      expect(env, name).toContainEqual({ name: 'TEMPORAL_API_KEY', valueFrom: { secretKeyRef: { name: 'relayer-temporal-api-key', key: 'apiKey' } } });
    }
    expect(named(objects, 'ScaledObject', 'relayer-prover')!.spec.triggers[0].authenticationRef).toEqual({ name: 'relayer-temporal' });
    const auth = named(objects, 'TriggerAuthentication', 'relayer-temporal')!;
    expect(auth.spec.secretTargetRef).toEqual([{ parameter: 'apiKey', name: 'relayer-temporal-api-key', key: 'apiKey' }]);
    expect(triggerAuthenticationProblems(auth)).toEqual([]);
    expect(strictProblems(builtIn(objects))).toEqual([]);
  });

  it('temporal-api-key opens egress to Temporal Cloud (public addresses, TCP 7233) for exactly the Temporal clients, and nothing else', () => {
    const objects = renderWithComponent('temporal-api-key');
    const added = objects.filter((o) => o.kind === 'NetworkPolicy' && !rendered.get('deploy/k8s/overlays/production')!.some((p) => p.kind === 'NetworkPolicy' && p.metadata.name === o.metadata.name));
    expect(added.map((p) => p.metadata.name)).toEqual(['relayer-temporal-cloud']);
    const [cloud] = added;
    expect(cloud!.spec.podSelector.matchExpressions[0].values).toEqual(temporalPods);
    expect(cloud!.spec.egress).toEqual([{
      to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'] } }],
      ports: [{ protocol: 'TCP', port: 7233 }],
    }]);
    expect(strictProblems(builtIn(added))).toEqual([]);
  });

  it('otlp sets the collector endpoint for every process and opens exactly its port (TCP 4318) into namespace monitoring', () => {
    const objects = renderWithComponent('otlp');
    const config = objects.find((o) => o.kind === 'ConfigMap')!.data!;
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector.monitoring.svc.cluster.local:4318');
    // The overlay's own settings survive the component's merge.
    expect(config).toMatchObject({ TEMPORAL_NAMESPACE: 'relayer', RELAYER_SIGNER: 'pkcs11' });
    const otlp = named(objects, 'NetworkPolicy', 'relayer-otlp')!;
    expect(otlp.spec.podSelector.matchExpressions[0].values).toEqual(temporalPods);
    expect(otlp.spec.egress).toEqual([{
      to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ protocol: 'TCP', port: 4318 }],
    }]);
    expect(new URL(config.OTEL_EXPORTER_OTLP_ENDPOINT!).port).toBe('4318');
    expect(strictProblems(builtIn(objects))).toEqual([]);
  });

  it('the settings the components set become the SDK\'s connection options: the files read, TLS implied by an API key, a missing file named', () => {
    const dir = mkdtempSync(path.join(scratch, 'tls-'));
    for (const [file, text] of [['ca.crt', 'CA PEM'], ['tls.crt', 'CERT PEM'], ['tls.key', 'KEY PEM']] as const) writeFileSync(path.join(dir, file), text);
    const address = 'temporal.example.org:7233';
    const mtls = temporalConnectOptions(loadConfig({
      TEMPORAL_ADDRESS: address, TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: path.join(dir, 'ca.crt'), TEMPORAL_TLS_CERT: path.join(dir, 'tls.crt'),
      TEMPORAL_TLS_KEY: path.join(dir, 'tls.key'), TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal',
    }));
    expect(mtls).toEqual({
      address, tls: { serverNameOverride: 'frontend.temporal', serverRootCACertificate: Buffer.from('CA PEM'), clientCertPair: { crt: Buffer.from('CERT PEM'), key: Buffer.from('KEY PEM') } },
    });
    expect(temporalConnectOptions(loadConfig({ TEMPORAL_ADDRESS: address, TEMPORAL_API_KEY: 'key-1' }))).toEqual({ address, tls: {}, apiKey: 'key-1' });
    expect(temporalConnectOptions(loadConfig({ TEMPORAL_ADDRESS: address }))).toEqual({ address });
    expect(() => loadConfig({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CERT: path.join(dir, 'tls.crt') })).toThrow(/TEMPORAL_TLS_KEY: is required with TEMPORAL_TLS_CERT/);
    expect(() => temporalConnectOptions(loadConfig({ TEMPORAL_ADDRESS: address, TEMPORAL_TLS_CA: path.join(dir, 'missing.crt') }))).toThrow(/^TEMPORAL_TLS_CA: cannot read .*missing\.crt \(ENOENT\)$/);
  });
});

/** The Kubernetes version deploy/README.md states the manifests are for. */
const kubernetesVersion = /validated strictly against Kubernetes (\d+\.\d+)/.exec(readFileSync(new URL('../README.md', import.meta.url), 'utf8'))![1]!;
const scratch = mkdtempSync(path.join(tmpdir(), 'k8s-validate-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** kubernetes-validate --strict (unknown fields are errors) on `objects` for the stated version: its error lines. */
function strictProblems(objects: K8sObject[]): string[] {
  const file = path.join(scratch, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, objects.map((o) => stringify(o)).join('---\n'));
  const { status, output } = runTool('kubernetes-validate', ['--kubernetes-version', `${kubernetesVersion}.0`, '--strict', '--quiet', file]);
  const problems = output.split('\n').filter((line) => line.startsWith('ERROR'));
  if (status !== 0 && problems.length === 0) throw new Error(`kubernetes-validate failed:\n${output}`);
  return problems;
}

const builtIn = (objects: K8sObject[]) => objects.filter((o) => !o.apiVersion.startsWith('keda.sh/') && !o.apiVersion.startsWith('monitoring.coreos.com/'));

describe(`strict validation (Kubernetes ${kubernetesVersion}, KEDA's and the Prometheus Operator's schemas)`, () => {
  it.each(overlays)('%s: every built-in object passes Kubernetes\' strict schema', (overlay) => {
    expect(strictProblems(builtIn(rendered.get(overlay)!))).toEqual([]);
  });

  it('the production ScaledObject passes KEDA\'s schema with no field KEDA does not know', () => {
    expect(scaledObjectProblems(named(rendered.get('deploy/k8s/overlays/production')!, 'ScaledObject', 'relayer-prover'))).toEqual([]);
  });

  it.each(overlays)('%s: the PodMonitor and the PrometheusRule pass the Prometheus Operator\'s schemas with no unknown field', (overlay) => {
    expect(podMonitorProblems(named(rendered.get(overlay)!, 'PodMonitor', 'relayer'))).toEqual([]);
    expect(prometheusRuleProblems(named(rendered.get(overlay)!, 'PrometheusRule', 'relayer'))).toEqual([]);
    const monitor = structuredClone(named(rendered.get(overlay)!, 'PodMonitor', 'relayer')!);
    monitor.spec.podMetricsEndpoints[0].intervall = '15s';
    monitor.spec.podMetricsEndpoints[0].port = 9464;
    expect(podMonitorProblems(monitor)).toEqual(['data/spec/podMetricsEndpoints/0/port must be string', 'PodMonitor.spec.podMetricsEndpoints[0].intervall: unknown field']);
  });

  it('a misspelt field, a wrong type or a missing required field fails', () => {
    const deployment = structuredClone(named(rendered.get('deploy/k8s/overlays/production')!, 'Deployment', 'relayer-api')!);
    deployment.spec.template.spec.containers[0].securityContext.readOnlyRootFilesytem = true;
    const job = structuredClone(named(rendered.get('deploy/k8s/overlays/production')!, 'Job', 'relayer-migrate')!);
    job.spec.backoffLimit = 'three';
    const problems = strictProblems([deployment, job]);
    expect(problems).toEqual([
      expect.stringMatching(/deployment\/relayer-api.*'readOnlyRootFilesytem' was unexpected/),
      expect.stringMatching(/job\/relayer-migrate.*backoffLimit/),
    ]);

    const scaler = structuredClone(named(rendered.get('deploy/k8s/overlays/production')!, 'ScaledObject', 'relayer-prover')!);
    scaler.spec.maxReplicaCont = 20;
    scaler.spec.minReplicaCount = 'one';
    delete scaler.spec.triggers[0].type;
    expect(scaledObjectProblems(scaler)).toEqual(expect.arrayContaining([
      expect.stringMatching(/minReplicaCount must be integer/),
      expect.stringMatching(/triggers\/0 must have required property type/),
      'ScaledObject.spec.maxReplicaCont: unknown field',
    ]));
  });
});

/** The `[pgbouncer]` and `[databases]` settings of a pgbouncer.ini text, by section. */
function pgbouncerIni(text: string): Record<string, Record<string, string>> {
  const sections: Record<string, Record<string, string>> = {};
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith(';') || line.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) { section = header[1]!; sections[section] = {}; continue; }
    const [key, ...value] = line.split('=');
    sections[section]![key!.trim()] = value.join('=').trim();
  }
  return sections;
}

describe('PgBouncer (deploy/k8s/components/pgbouncer)', () => {
  const apps = ['relayer-api', 'relayer-worker', 'relayer-prover'];
  let objects: K8sObject[];
  beforeAll(() => { objects = renderWithComponent('pgbouncer'); });
  const ini = () => {
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('relayer-pgbouncer'))!;
    return pgbouncerIni(configMap.data!['pgbouncer.ini']!);
  };

  it('runs PgBouncer in session mode from an image pinned by digest, behind a Service on the port it listens on, as non-root on a read-only root filesystem', () => {
    const deployment = named(objects, 'Deployment', 'relayer-pgbouncer')!;
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(container.image).toMatch(/^[\w.\/-]+@sha256:[0-9a-f]{64}$/);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    const settings = ini().pgbouncer!;
    // pg-boss, the api's LISTEN and the trade gauges' advisory lock need a session of their own.
    expect(settings.pool_mode).toBe('session');
    expect(settings.unix_socket_dir).toBe('');
    const service = named(objects, 'Service', 'relayer-pgbouncer')!;
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([{ name: 'pgbouncer', port: Number(settings.listen_port), targetPort: 'pgbouncer' }]);
    expect(container.ports).toEqual([{ name: 'pgbouncer', containerPort: Number(settings.listen_port) }]);
    // The configuration it reads is the rendered ConfigMap; the userlist comes from its own Secret, read-only.
    expect(container.command).toEqual(['pgbouncer', '/etc/pgbouncer/pgbouncer.ini']);
    expect(pod.volumes).toContainEqual({ name: 'config', configMap: { name: objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('relayer-pgbouncer'))!.metadata.name } });
    expect(pod.volumes).toContainEqual({ name: 'auth', secret: { secretName: 'relayer-pgbouncer-auth', items: [{ key: 'userlist.txt', path: 'userlist.txt' }], defaultMode: 0o440 } });
    expect(settings.auth_file).toBe('/etc/pgbouncer/auth/userlist.txt');
    expect(named(objects, 'PodDisruptionBudget', 'relayer-pgbouncer')!.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(strictProblems(builtIn(objects))).toEqual([]);
  });

  it('points the api, worker and prover at PgBouncer (their own Secret\'s DATABASE_URL_PGBOUNCER) and leaves the migrate Job on PostgreSQL', () => {
    for (const name of apps) {
      const env = named(objects, 'Deployment', name)!.spec.template.spec.containers[0].env as { name: string; valueFrom?: unknown }[];
      expect(env.filter((e) => e.name === 'DATABASE_URL'), name).toEqual([{ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: `${name}-secrets`, key: 'DATABASE_URL_PGBOUNCER' } } }]);
    }
    const migrate = named(objects, 'Job', 'relayer-migrate')!.spec.template.spec.containers[0].env;
    expect(migrate).toContainEqual({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'relayer-migrate-secrets', key: 'DATABASE_URL' } } });
    // Nothing else of the overlay changed: the signer, the ConfigMap's settings.
    expect(objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('relayer-config'))!.data).toMatchObject({ RELAYER_SIGNER: 'pkcs11', TEMPORAL_NAMESPACE: 'relayer' });
  });

  it('lets the apps reach PgBouncer and no longer PostgreSQL, PgBouncer be reached by them alone and reach PostgreSQL', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    const podLabels = (name: string) => named(objects, 'Deployment', name)?.spec.template.metadata.labels ?? { 'app.kubernetes.io/name': name };
    /** Whether a NetworkPolicy selector (matchLabels or `In` expressions) selects pods with these labels. */
    const selects = (selector: any, labels: Record<string, string>) =>
      Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v)
      && (selector.matchExpressions ?? []).every((e: any) => e.operator === 'In' && e.values.includes(labels[e.key]));
    /** The ports `from` may open towards `to` (pod names), from the egress side and the ingress side. */
    const egressPorts = (from: string, toLabels: Record<string, string> | 'outside') => policies
      .filter((p) => p.spec.policyTypes.includes('Egress') && selects(p.spec.podSelector, podLabels(from)))
      .flatMap((p) => (p.spec.egress ?? []).filter((rule: any) => !rule.to || (toLabels !== 'outside' && rule.to.some((peer: any) => peer.podSelector && !peer.namespaceSelector && selects(peer.podSelector, toLabels)))))
      .flatMap((rule: any) => rule.ports.map((port: any) => port.port));
    const ingressPorts = (to: string, fromLabels: Record<string, string>) => policies
      .filter((p) => p.spec.policyTypes.includes('Ingress') && selects(p.spec.podSelector, podLabels(to)))
      .flatMap((p) => (p.spec.ingress ?? []).filter((rule: any) => !rule.from || rule.from.some((peer: any) => peer.podSelector && selects(peer.podSelector, fromLabels))))
      .flatMap((rule: any) => rule.ports.map((port: any) => port.port));
    const bouncer = podLabels('relayer-pgbouncer');
    for (const app of apps) {
      expect(egressPorts(app, bouncer), app).toContain(6432);
      expect(ingressPorts('relayer-pgbouncer', podLabels(app)), app).toContain(6432);
      // No way around it: PostgreSQL's port is closed to the apps.
      expect(egressPorts(app, 'outside'), app).not.toContain(5432);
    }
    expect(ingressPorts('relayer-pgbouncer', { 'app.kubernetes.io/name': 'relayer-migrate' })).toEqual([]);
    expect(egressPorts('relayer-pgbouncer', 'outside')).toContain(5432);
    expect(egressPorts('relayer-migrate', 'outside')).toContain(5432);
    expect(Number(/port=(\d+)/.exec(ini().databases!.relayer!)![1])).toBe(5432);
  });

  it('sizes the pools against the pods: every client fits max_client_conn, the sessions they hold fit one instance\'s pool, and the instances\' server connections fit max_connections', () => {
    const settings = ini().pgbouncer!;
    const [maxClient, poolSize, maxDb] = [settings.max_client_conn, settings.default_pool_size, settings.max_db_connections].map(Number) as [number, number, number];
    const { roles } = connectionBudget(objects);
    // Clients: every app pod at its most (autoscaler maximum, rollout surge), each its pool and its sessions beyond it.
    // The Service may send them all to one instance.
    const clients = apps.reduce((sum, name) => sum + roles[name]!.pods * roles[name]!.each, 0);
    expect(clients).toBe(24 + 27 + 40);
    expect(clients).toBeLessThanOrEqual(maxClient);
    // Sessions held for a process's life (LISTEN, pg-boss, the gauges' lock) never go back to the pool: all of them
    // on one instance must leave room in its pool for the queries.
    const held = apps.reduce((sum, name) => sum + roles[name]!.pods * connectionsBeyondPool[name]!, 0);
    expect(held).toBe(4 * 1 + 3 * 5);
    expect(held).toBeLessThan(Math.min(poolSize, maxDb));
    // Server: each instance opens at most max_db_connections, with no surge instance; the migrate Job goes direct.
    const deployment = named(objects, 'Deployment', 'relayer-pgbouncer')!;
    const instances = deployment.spec.replicas + deployment.spec.strategy.rollingUpdate.maxSurge;
    const server = instances * maxDb + roles['relayer-migrate']!.pods * roles['relayer-migrate']!.each;
    expect(server).toBeLessThanOrEqual(postgresMaxConnections - postgresReservedConnections);
    expect(maxDb).toBeGreaterThanOrEqual(poolSize);
  });
});

describe('PostgreSQL with CloudNativePG (deploy/k8s/components/cloudnativepg)', () => {
  let objects: K8sObject[];
  beforeAll(() => {
    const dir = mkdtempSync(path.join(scratch, 'cnpg-'));
    const relative = (to: string) => path.relative(dir, path.resolve(to));
    writeFileSync(path.join(dir, 'kustomization.yaml'), stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', namespace: 'relayer',
      resources: [relative('deploy/k8s/overlays/production')],
      components: [relative('deploy/k8s/components/cloudnativepg'), relative('deploy/k8s/components/pgbouncer')],
    }));
    objects = render(dir);
  });

  it('runs a primary and one replica at the max_connections the connection budget counts, archiving WAL to an object store named by a Secret, with a nightly base backup', () => {
    const cluster = named(objects, 'Cluster', 'relayer-postgres')!;
    expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
    expect(cluster.spec.instances).toBe(2);
    expect(cluster.spec.imageName).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(Number(cluster.spec.postgresql.parameters.max_connections)).toBe(postgresMaxConnections);
    expect(Number(cluster.spec.postgresql.parameters.superuser_reserved_connections)).toBe(postgresReservedConnections);
    expect(cluster.spec.plugins).toEqual([{ name: 'barman-cloud.cloudnative-pg.io', isWALArchiver: true, parameters: { barmanObjectName: 'relayer-backups' } }]);
    const store = named(objects, 'ObjectStore', 'relayer-backups')!;
    expect(store.spec.configuration.destinationPath).toMatch(/^s3:\/\/placeholder-/);
    expect(store.spec.configuration.s3Credentials).toEqual({
      accessKeyId: { name: 'relayer-backups-s3', key: 'ACCESS_KEY_ID' }, secretAccessKey: { name: 'relayer-backups-s3', key: 'ACCESS_SECRET_KEY' },
    });
    const schedule = named(objects, 'ScheduledBackup', 'relayer-postgres-nightly')!;
    expect(schedule.spec).toMatchObject({ cluster: { name: 'relayer-postgres' }, method: 'plugin', pluginConfiguration: { name: 'barman-cloud.cloudnative-pg.io' } });
    // Six cron fields, seconds first (CloudNativePG's format).
    expect(schedule.spec.schedule.split(' ')).toHaveLength(6);
    for (const object of [cluster, store, schedule]) expect(object.metadata.namespace).toBe('relayer');
  });

  it('PgBouncer reaches the cluster\'s primary, and the cluster\'s pods admit the processes, PgBouncer and each other on 5432', () => {
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('relayer-pgbouncer'))!;
    expect(pgbouncerIni(configMap.data!['pgbouncer.ini']!).databases!.relayer).toMatch(/^host=relayer-postgres-rw port=5432 dbname=relayer$/);
    const policy = named(objects, 'NetworkPolicy', 'relayer-postgres')!;
    expect(policy.spec.podSelector).toEqual({ matchLabels: { 'cnpg.io/cluster': 'relayer-postgres' } });
    const postgresIngress = policy.spec.ingress.find((rule: any) => rule.ports.some((p: any) => p.port === 5432));
    expect(postgresIngress.from[0].podSelector.matchExpressions[0].values).toEqual(['relayer-api', 'relayer-worker', 'relayer-prover', 'relayer-migrate', 'relayer-pgbouncer']);
    expect(postgresIngress.from).toContainEqual({ podSelector: { matchLabels: { 'cnpg.io/cluster': 'relayer-postgres' } } });
    expect(strictProblems(builtIn(objects).filter((o) => !/cnpg\.io\//.test(o.apiVersion)))).toEqual([]);
  });
});
