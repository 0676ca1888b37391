import { context, trace } from '@opentelemetry/api';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { tracingMiddleware } from './http.ts';
import { runTracedJob, withTraceContext } from './jobs.ts';
import { inSpan } from './spans.ts';
import { tracingBundleOptions, tracingClientInterceptors, tracingWorkerOptions } from './temporal.ts';
import { currentTracing, startTracing, tracingConfigured } from './tracing.ts';

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): nothing registered, every hook passes through', () => {
  afterAll(async () => currentTracing()?.shutdown());

  it('registers no provider and adds nothing to jobs, the workflow bundle or the Temporal client and worker', async () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(startTracing('relayer-test', {})).toBeUndefined();
    expect(currentTracing()).toBeUndefined();
    expect(withTraceContext({ tradeId: 't' })).toEqual({ tradeId: 't' });
    expect(tracingBundleOptions()).toEqual({});
    expect(tracingClientInterceptors()).toBeUndefined();
    expect(tracingWorkerOptions()).toEqual({});
    expect(await inSpan('proof', {}, async () => trace.getSpan(context.active()))).toBeUndefined();
    expect(await runTracedJob('trade-prove', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, async () => 'ran')).toBe('ran');

    const app = express();
    app.use(tracingMiddleware());
    app.get('/x', (_req, res) => { res.json({ span: trace.getSpan(context.active()) !== undefined }); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    expect(await (await fetch(`http://127.0.0.1:${port}/x`)).json()).toEqual({ span: false });
    server.close();
  });

  it('with the endpoint set, starts once, and job data then carries the active trace context', async () => {
    const exports: string[] = [];
    const collector = createServer((req, res) => { exports.push(req.url!); req.resume(); req.on('end', () => res.end('{}')); });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/`;
    const tracing = startTracing('relayer-test', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })!;
    expect(tracing.serviceName).toBe('relayer-test');
    expect(startTracing('other', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toBe(tracing);
    const data = await inSpan('queue', {}, async () => withTraceContext({ tradeId: 't' }));
    expect(data).toMatchObject({ tradeId: 't', traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) });
    const parentTrace = (data as unknown as { traceparent: string }).traceparent.split('-')[1];
    const inJob = await runTracedJob('trade-prove', data, async () => trace.getSpan(context.active())!.spanContext().traceId);
    expect(inJob).toBe(parentTrace);
    expect(tracingBundleOptions().workflowInterceptorModules).toHaveLength(1);
    // The spans go to the endpoint given (not the exporter's default localhost:4318).
    await tracing.flush();
    expect(exports).toContain('/v1/traces');
    await tracing.shutdown();
    collector.close();
  });
});
