import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Wallet } from 'ethers';
import { Keypair } from '@stellar/stellar-sdk';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { startDevnet, type Devnet } from '../../devnet/index.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { importRegistry } from '../../registry/import.ts';
import { currentTracing } from '../../telemetry/tracing.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { AD_CHAIN, devnetClient, eventually, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startServiceProcess, startTemporalDevServer, stopped } from '../support/temporal-stack.ts';
import { call, loginEvm } from '../support/wallets.ts';

/**
 * OpenTelemetry tracing of one trade, read back from an OTLP/HTTP receiver in this test (what a
 * collector would get at OTEL_EXPORTER_OTLP_ENDPOINT): with the embedded orchestrator, the confirm
 * request -> the prove job -> the generateProof activity -> the proof are one chain of parents; on
 * Temporal (API here, worker and prover as their own processes), the confirm request -> its follow-ups
 * signal -> the workflow's signal handler -> the generateProof activity on the prover process -> the proof
 * are one chain across three processes, and the create request is the parent of the workflow's start.
 */

interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

const received: ReceivedSpan[] = [];
let collector: Server;

/** The OTLP/HTTP receiver: JSON export requests on /v1/traces (the exporter's default encoding). */
async function startCollector(): Promise<string> {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const request = JSON.parse(body) as { resourceSpans: any[] };
        for (const rs of request.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              const attributes = Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value ?? {})[0]]));
              received.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
}

/** The chain of parents from `span` up to the first one not received (root last). */
function ancestry(span: ReceivedSpan): ReceivedSpan[] {
  const chain = [span];
  for (let at = span; at.parentSpanId;) {
    const parent = received.find((s) => s.spanId === at.parentSpanId && s.traceId === at.traceId);
    if (!parent) break;
    chain.push(parent);
    at = parent;
  }
  return chain;
}

const describeChain = (chain: ReceivedSpan[]) => chain.map((s) => `${s.service}:${s.name}`).join(' <- ');

const { makerKey, bridgerKey, maker, bridger } = tradeParties();

/** Ad, trade and deposit through HTTP; resolves with the trade id once its proof is stored. */
async function tradeToProof(api: TestService, chain: DevnetClient, readProofState: (tradeId: string) => Promise<string | undefined>): Promise<string> {
  const makerToken = (await loginEvm(api, maker)).body.tokens.access;
  const bridgerToken = (await loginEvm(api, bridger)).body.tokens.access;
  const routes = await call(api, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
  const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
  const ad = await call(api, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
  await chain.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
  const adTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
  expect((await call(api, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
  await chain.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
  const created = await call(api, 'POST', '/v1/trades/create', { adId: ad.body.adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
  expect(created.status).toBe(200);
  const { tradeId, reqContractDetails: order } = created.body;
  const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
  expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
  await eventually('proof ready', () => readProofState(tradeId), (state) => state === 'ready', 120_000);
  return tradeId;
}

beforeAll(async () => {
  // Set before any service builds its container: that is where tracing starts (telemetry/tracing.ts).
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = await startCollector();
  process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
});

afterAll(async () => {
  await currentTracing()?.shutdown();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  collector?.close();
});

describe('tracing with the embedded orchestrator', () => {
  let service: TestService;
  let chain: DevnetClient;

  beforeAll(async () => {
    service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0' });
    chain = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  }, 180_000);

  afterAll(async () => {
    chain?.close();
    await service?.close();
  });

  it('exports the confirm request, the prove job, the generateProof activity and the proof as one chain of spans', async () => {
    const tradeId = await tradeToProof(service, chain, async (id) => (await service.db.knex('trades').where({ id }).first('proof_state'))?.proof_state);
    await currentTracing()!.flush();

    const proof = await eventually('the proof span', async () => received.find((s) => s.name === 'proof'), (s) => s !== undefined, 10_000);
    const chainOfSpans = ancestry(proof!);
    const names = chainOfSpans.map((s) => s.name);
    expect(names.slice(0, 3), describeChain(chainOfSpans)).toEqual(['proof', 'activity generateProof', 'job trade-prove']);
    expect(chainOfSpans[1]!.attributes['relayer.trade_id']).toBe(tradeId);
    // The root: the HTTP request that confirmed the deposit (a server span, named by its route).
    expect(chainOfSpans.at(-1)!.name, describeChain(chainOfSpans)).toBe('POST /v1/trades/:id/confirm');
    expect(chainOfSpans.at(-1)!.kind).toBe(2); // SPAN_KIND_SERVER
    expect(new Set(chainOfSpans.map((s) => s.traceId)).size).toBe(1);
    // The deposit's state write ran in that request, in the same trace (PROOF_READY is written by
    // generateProof itself, in the transaction that stores the proof: no applyEvent of its own).
    const applied = received.filter((s) => s.traceId === proof!.traceId && s.name === 'activity applyEvent');
    expect(applied.map((s) => ancestry(s).at(-1)!.name)).toEqual(['POST /v1/trades/:id/confirm']);
  }, 300_000);
});

describe('tracing with the Temporal orchestrator (worker and prover processes)', () => {
  const relayerKey = Wallet.createRandom().privateKey;
  const relayerStellar = Keypair.random().secret();
  const children = new Set<ChildProcess>();
  let temporal: ChildProcess;
  let db: TestDatabase;
  let devnet: Devnet;
  let chain: DevnetClient;
  let dataDir: string;
  let service: RunningService;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-tracing-'));
    const server = await startTemporalDevServer(inject('temporalCli'));
    temporal = server.process;
    [db, devnet] = await Promise.all([
      createTestDatabase(),
      startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } }),
    ]);
    await importRegistry(db.knex, devnet.registry);
    chain = await devnetClient(devnet.rpcUrls, devnet.deployments);
    const env = {
      NODE_ENV: 'test', DATABASE_URL: db.url, DATA_DIR: dataDir, TEMPORAL_ADDRESS: server.address,
      RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar,
    };
    // The worker and the prover export to the same receiver (OTEL_* inherited from this process's environment).
    for (const kind of ['worker', 'prover'] as const) children.add((await startServiceProcess(kind, { ...env, PROVER_POOL_SIZE: '1' })).child);
    const config = loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000' });
    service = await start(config, pino({ level: 'silent' }));
  }, 240_000);

  afterAll(async () => {
    for (const child of children) await stopped(child, 'SIGTERM');
    await service?.stop();
    chain?.close();
    await devnet?.stop();
    await db?.drop();
    if (temporal) await stopped(temporal, 'SIGTERM');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('carries the trade\'s trace from the create request through the workflow to the proof on another process', async () => {
    const api = { request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as TestService;
    const tradeId = await tradeToProof(api, chain, async (id) => (await db.knex('trades').where({ id }).first('proof_state'))?.proof_state);
    await currentTracing()!.flush();

    // The proof and its activity come from the prover process, exported on its own schedule.
    const proof = await eventually('the proof span from the prover', async () => received.find((s) => s.name === 'proof' && s.service === 'relayer-prover'), (s) => s !== undefined, 15_000);
    // The workflow's span of the activity ends when the activity's result is back: the worker exports it a moment later.
    const chainOfSpans = await eventually('the whole chain', async () => ancestry(proof!), (c) => c.at(-1)?.kind === 2, 15_000);
    const trace = received.filter((s) => s.traceId === proof!.traceId).map((s) => `${s.service}:${s.name}`).join(', ');
    // The deposit's confirm request (applied there, in one transaction) -> the follow-ups signal it
    // sends (signal-with-start) -> the workflow's signal handler -> the activity it scheduled on
    // queue `proofs` -> that activity on the prover process -> the proof.
    expect(chainOfSpans.map((s) => `${s.service}:${s.name}`), trace).toEqual([
      'relayer-prover:proof',
      'relayer-prover:RunActivity:generateProof',
      'relayer-worker:StartActivity:generateProof',
      'relayer-worker:HandleSignal:followUps',
      'relayer-embedded:SignalWithStartWorkflow:tradeWorkflow',
      'relayer-embedded:POST /v1/trades/:id/confirm',
    ]);
    expect(chainOfSpans.at(-1)!.kind).toBe(2); // SPAN_KIND_SERVER
    expect(new Set(chainOfSpans.map((s) => s.traceId)).size).toBe(1);
    // The create request started the workflow within its own trace (the workflow's run span ends with the workflow, hours later).
    const startWorkflow = received.find((s) => s.name === 'StartWorkflow:tradeWorkflow');
    expect(startWorkflow && ancestry(startWorkflow).map((s) => s.name)).toEqual(['StartWorkflow:tradeWorkflow', 'POST /v1/trades/create']);
    expect(tradeId).toBeTruthy();
  }, 300_000);
});
