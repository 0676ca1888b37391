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

/** The highest cursor within `ledger`: after every event of it (Soroban RPC's MaxCursor at that ledger). */
function lastCursorOf(ledger: number): string {
  const toid = (BigInt(ledger) << 32n) | (0xfffffn << 12n) | 0xfffn;
  return `${toid.toString().padStart(19, '0')}-${String(0xffffffff).padStart(10, '0')}`;
}

/**
 * A `getEvents` rewrite, a DOUBLE of stellar-rpc's per-request scan limit, which the local network
 * does not apply: stellar-rpc (methods/get_events.go) scans at most LedgerScanLimit ledgers (10,000)
 * from the request's start (its startLedger, or its cursor's ledger) and, unless the page is full,
 * answers as cursor the highest position of the last ledger it scanned. This keeps of the real
 * answer the events inside a window of `ledgers` ledgers and sets the cursor so, so a test sees a
 * window end before its range does, in a few ledgers instead of 10,000.
 */
export function scanLimitedGetEvents(ledgers: number): (result: any, params: Record<string, unknown>) => unknown {
  return (result, params) => {
    if (!result) throw { code: -32603, message: 'scan-limit double: the real RPC answered an error' };
    const pagination = (params.pagination ?? {}) as { cursor?: string; limit?: number };
    const start = pagination.cursor ? Number(BigInt(pagination.cursor.split('-')[0]!) >> 32n) : Number(params.startLedger);
    const requestedEnd = typeof params.endLedger === 'number' ? params.endLedger : Number.POSITIVE_INFINITY;
    const end = Math.min(start + ledgers, Number(result.latestLedger) + 1, requestedEnd);
    const events = (result.events as Array<{ ledger: number; id: string }>).filter((event) => event.ledger < end);
    const full = events.length === (pagination.limit ?? 100);
    return { ...result, events, cursor: full ? events[events.length - 1]!.id : lastCursorOf(end - 1) };
  };
}
