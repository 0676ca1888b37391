import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTool } from '../../test/support/deploy-tools.ts';
import { podMonitorProblems, prometheusRuleProblems, scaledObjectProblems } from './crd-schema.ts';
import { prometheusRuleText } from '../prometheus/build.ts';
import { configSettings as knownSettings } from '../../test/support/known-names.ts';

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
        expect(container.image, where).toMatch(/^registry\.example\.com\/relayer\/relayer:\d+\.\d+\.\d+$/);
        expect(container.securityContext, where).toMatchObject({
          allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] },
        });
        // The only writable place (npm and tsx caches) is an emptyDir on /tmp.
        expect(container.volumeMounts, where).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
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

  it('probes the api on /health (readiness, liveness, start-up) and exposes it through a Service', () => {
    const api = named(objects(), 'Deployment', 'relayer-api')!.spec.template.spec.containers[0];
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) expect(api[probe].httpGet, probe).toEqual({ path: '/health', port: 'http' });
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
      for (const name of names) expect(knownSettings, `${workload.metadata.name} env ${name}`).toContain(name);
      for (const secret of ['DATABASE_URL', 'JWT_SECRET', 'RELAYER_EVM_PRIVATE_KEY', 'RELAYER_STELLAR_SECRET', 'SEP10_SIGNING_SECRET']) {
        expect(container.env.find((e: any) => e.name === secret)?.valueFrom, `${workload.metadata.name} ${secret}`).toEqual({ secretKeyRef: { name: 'relayer-secrets', key: secret } });
      }
    }
    expect(configMaps[0]!.data).toMatchObject({ NODE_ENV: 'production', TEMPORAL_ADDRESS: expect.stringMatching(/:7233$/) });
    // No secret value in a ConfigMap, and no Secret object rendered at all: it is created out of band.
    expect(objects().some((o) => o.kind === 'Secret')).toBe(false);
    for (const key of Object.keys(configMaps[0]!.data!)) expect(key).not.toMatch(/SECRET|PRIVATE_KEY|PASSWORD|DATABASE_URL/);
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
