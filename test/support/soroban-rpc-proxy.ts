import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC proxy in front of a real Stellar RPC (the local Soroban network), for tests: it
 * records every request and passes the real answer through, unless a test installs a rewrite for a
 * method. A rewrite is a DOUBLE of a broken or hostile RPC, for what the real network never
 * answers (an internal error, a retention window already passed, an altered transaction, an
 * older protocol's meta), and it starts from the real answer, so its XDR stays the network's own.
 */
export interface SorobanRpcProxy {
  url: string;
  /** Every request's method and params, in order. */
  requests: Array<{ method: string; params: Record<string, unknown> }>;
  /** Per method: given the real result (undefined when the real RPC answered an error) and the params, the result to answer; throw `{ code, message }` to answer a JSON-RPC error. */
  rewrites: Record<string, (result: any, params: Record<string, unknown>) => unknown>;
  close(): Promise<void>;
}

export async function startSorobanRpcProxy(target: string): Promise<SorobanRpcProxy> {
  const requests: SorobanRpcProxy['requests'] = [];
  const rewrites: SorobanRpcProxy['rewrites'] = {};
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', async () => {
      const request = JSON.parse(body) as { id: unknown; method: string; params?: Record<string, unknown> };
      requests.push({ method: request.method, params: request.params ?? {} });
      const real = (await (await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()) as { result?: unknown; error?: unknown };
      const rewrite = rewrites[request.method];
      let payload: object = real;
      if (rewrite) {
        try {
          payload = { result: rewrite(real.result, request.params ?? {}) };
        } catch (error) {
          payload = { error };
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...payload }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rewrites,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
