import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook } from './http-delivery.ts';

/**
 * One delivery attempt against real HTTP receivers on loopback that misbehave: a receiver that
 * answers slowly, one that never stops answering, one that fails, and a name that resolves to a
 * private address in production. None may hold the attempt beyond its timeout or make it read
 * more than a bounded part of the answer.
 */

interface Receiver { url: string; requests: number; closed: Promise<void>; server: Server }
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A receiver whose answer is `answer`; `closed` resolves when the service drops the connection of its first request. */
async function receiver(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
  let onClosed!: () => void;
  const state = { requests: 0, closed: new Promise<void>((resolve) => { onClosed = resolve; }) };
  const server = createServer((req, res) => {
    state.requests++;
    res.on('close', onClosed);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
}

const body = JSON.stringify({ type: 'trade.status_changed', timestamp: '2026-11-24T08:00:00.000Z', data: {} });
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1795000000', 'webhook-signature': 'v1,x' };

describe('one webhook delivery attempt', () => {
  it('gives up on a receiver that answers a byte at a time once the timeout is spent, and drops its connection', async () => {
    const slow = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    });
    const attempt = await postWebhook(slow.url, headers, body, { timeoutMs: 500, publicOnly: false });
    expect(attempt).toMatchObject({ succeeded: false, statusCode: null, error: 'no answer within 500 ms' });
    await slow.closed;
  });

  it('reads at most 64 KiB of an answer that never ends: a 2xx is a success, and the connection is dropped', async () => {
    let written = 0;
    const chatty = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 120);
      const pour = () => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pour);
            return;
          }
        }
      };
      pour();
    });
    // A generous timeout: an attempt that waited for the end of this answer would fail by it instead.
    const attempt = await postWebhook(chatty.url, headers, body, { timeoutMs: 30_000, publicOnly: false });
    expect(attempt).toMatchObject({ succeeded: true, statusCode: 200, error: null });
    await chatty.closed;
    expect(written).toBeGreaterThan(64 * 1024);
  });

  it('reports a receiver\'s failure with its status, and sends the signed headers and the body as they are', async () => {
    let received: { headers: IncomingMessage['headers']; body: string } | undefined;
    const failing = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk) => { text += chunk; });
      req.on('end', () => {
        received = { headers: req.headers, body: text };
        res.statusCode = 500;
        res.end('down');
      });
    });
    servers.push(failing);
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    const attempt = await postWebhook(`http://127.0.0.1:${(failing.address() as AddressInfo).port}/`, headers, body, { timeoutMs: 5_000, publicOnly: false });
    expect(attempt).toMatchObject({ succeeded: false, statusCode: 500, error: 'answered 500' });
    expect(received).toMatchObject({ body, headers: { ...headers, 'content-type': 'application/json' } });
  });

  it('in production refuses to connect to a name that resolves to a loopback address (a name re-pointed after registration)', async () => {
    const inside = await receiver((_req, res) => res.end());
    const port = (inside.server.address() as AddressInfo).port;
    const attempt = await postWebhook(`http://localhost:${port}/hook`, headers, body, { timeoutMs: 5_000, publicOnly: true });
    expect(attempt.succeeded).toBe(false);
    expect(attempt.error).toMatch(/^localhost resolves to a private address/);
    expect(inside.requests).toBe(0);
  });
});
