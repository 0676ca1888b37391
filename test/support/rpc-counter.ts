import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC relay on a loopback port in front of a real node (an anvil of the devnet) that counts
 * every call passing through it: a batch counts each of its calls. Registered as a chain's RPC URL,
 * it counts what the service asks that chain, at the boundary where an RPC provider would bill it.
 * Bodies pass unchanged both ways.
 */
export interface RpcCounter {
  url: string;
  /** Calls relayed since the start or the last `reset()`, oldest first: the method and its parameters. */
  calls: { method: string; params: unknown[] }[];
  reset(): void;
  close(): Promise<void>;
}

export async function startRpcCounter(target: string): Promise<RpcCounter> {
  const counter: RpcCounter = {
    url: '',
    calls: [],
    reset: () => {
      counter.calls = [];
    },
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    try {
      const parsed = JSON.parse(body.toString('utf8')) as unknown;
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
        const { method, params } = call as { method: string; params?: unknown[] };
        counter.calls.push({ method, params: params ?? [] });
      }
    } catch {
      counter.calls.push({ method: '(unparsed)', params: [] });
    }
    try {
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      response.end(Buffer.from(await answer.arrayBuffer()));
    } catch {
      response.destroy();
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  counter.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return counter;
}
