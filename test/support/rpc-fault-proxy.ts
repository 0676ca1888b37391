import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How a faulty provider misbehaves. `down`: refuses every connection's request (socket destroyed);
 * `slow`: answers truly after `slowMs`; `behind`: its head (eth_blockNumber, getLatestLedger,
 * getHealth) is `behindBy` blocks back; `lie`: answers truly except through `lies` (a DOUBLE of a
 * broken or compromised provider, starting from the real answer); `honest`: passes everything.
 */
export type FaultMode = 'honest' | 'down' | 'slow' | 'behind' | 'lie';

/** Rewrites of a lying provider, per JSON-RPC method: the real result in, the lie out. */
export type Lies = Record<string, (result: any, params: unknown) => unknown>;

export interface RpcFaultProxy {
  /** The URL to register (with a made-up API key in its path and query, as paid providers' URLs carry). */
  url: string;
  mode: FaultMode;
  /** A fixed mode, or one per request (cycled by the request's number): every failure within one trade. */
  cycle?: FaultMode[];
  slowMs: number;
  /** Latency added to every answer in any mode (a provider farther away), on top of `slowMs` when slow. */
  delayMs: number;
  behindBy: number;
  lies: Lies;
  /**
   * Per JSON-RPC method, an answer given WITHOUT passing the request on (any mode but `down`): a DOUBLE
   * of a provider that takes a transaction and never relays it (dropped from its queue), which a
   * real node cannot be made to do on demand. Counted as a lie.
   */
  swallows: Record<string, (params: unknown) => unknown>;
  /** Requests by method, requests (HTTP bodies) served in each mode, and how many answers were a lie. */
  counts: { requests: Record<string, number>; modes: Partial<Record<FaultMode, number>>; lies: number };
  close(): Promise<void>;
}

const HEAD_METHODS: Record<string, (result: any, by: number) => unknown> = {
  eth_blockNumber: (result: string, by) => `0x${Math.max(0, Number(BigInt(result)) - by).toString(16)}`,
  getLatestLedger: (result: { sequence: number }, by) => ({ ...result, sequence: Math.max(1, result.sequence - by) }),
  getHealth: (result: { latestLedger: number }, by) => ({ ...result, latestLedger: Math.max(1, result.latestLedger - by) }),
};

/**
 * A JSON-RPC proxy in front of a real node (anvil, or the local Stellar RPC) that can be down, slow,
 * behind or lying, for tests of reading a chain through several providers. `apiKey` goes into the
 * URL, so a test can prove it is never logged.
 */
export async function startRpcFaultProxy(target: string, options: { mode?: FaultMode; apiKey?: string; delayMs?: number } = {}): Promise<RpcFaultProxy> {
  let served = 0;
  const proxy: Omit<RpcFaultProxy, 'url' | 'close'> = {
    mode: options.mode ?? 'honest', slowMs: 3_000, delayMs: options.delayMs ?? 0, behindBy: 100, lies: {}, swallows: {}, counts: { requests: {}, modes: {}, lies: 0 },
  };
  const modeNow = () => (proxy.cycle ? proxy.cycle[served++ % proxy.cycle.length]! : proxy.mode);
  const answer = async (request: { id: unknown; method: string; params?: unknown }, mode: FaultMode): Promise<object> => {
    proxy.counts.requests[request.method] = (proxy.counts.requests[request.method] ?? 0) + 1;
    const swallow = proxy.swallows[request.method];
    if (swallow) {
      proxy.counts.lies += 1;
      return { result: swallow(request.params) };
    }
    const real = (await (await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) })).json()) as {
      result?: unknown; error?: unknown;
    };
    if (mode === 'behind' && real.result !== undefined && HEAD_METHODS[request.method]) {
      return { ...real, result: HEAD_METHODS[request.method]!(real.result, proxy.behindBy) };
    }
    const lie = mode === 'lie' ? proxy.lies[request.method] : undefined;
    if (lie && real.result !== undefined && real.result !== null) {
      const told = lie(real.result, request.params);
      if (told !== undefined) {
        proxy.counts.lies += 1;
        return { ...real, result: told };
      }
    }
    return real;
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', async () => {
      const mode = modeNow();
      proxy.counts.modes[mode] = (proxy.counts.modes[mode] ?? 0) + 1;
      if (mode === 'down') {
        req.socket.destroy();
        return;
      }
      const delay = proxy.delayMs + (mode === 'slow' ? proxy.slowMs : 0);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        const parsed = JSON.parse(body) as { id: unknown; method: string; params?: unknown } | Array<{ id: unknown; method: string; params?: unknown }>;
        const payload = Array.isArray(parsed)
          ? await Promise.all(parsed.map((one) => answer(one, mode).then((a) => ({ jsonrpc: '2.0', id: one.id, ...a }))))
          : { jsonrpc: '2.0', id: parsed.id, ...(await answer(parsed, mode)) };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      } catch {
        res.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const key = options.apiKey ?? 'test-api-key';
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}/v3/${key}?apikey=${key}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
