import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback JSON-RPC server answering Soroban RPC methods from canned results, for tests: no
 * Stellar network can run here. The results hold real base64 XDR built with the sdk's `xdr`
 * module (see stellar-fixtures.ts), so the sdk parses them exactly as it parses a live node's.
 */
export interface SorobanRpcStub {
  url: string;
  /** Result per method, given the request params; throw `{ code, message }` to answer a JSON-RPC error. */
  handlers: Record<string, (params: Record<string, unknown>) => unknown>;
  close(): Promise<void>;
}

/** Starts the stub on a free loopback port. */
export async function startSorobanRpcStub(): Promise<SorobanRpcStub> {
  const handlers: SorobanRpcStub['handlers'] = {};
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = JSON.parse(body) as { id: unknown; method: string; params: Record<string, unknown> };
      const reply = (payload: object) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...payload }));
      };
      const handler = handlers[request.method];
      if (!handler) return reply({ error: { code: -32601, message: `method not found: ${request.method}` } });
      try {
        reply({ result: handler(request.params ?? {}) });
      } catch (error) {
        reply({ error: error as object });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    handlers,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
