import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredPushedEvent } from '../../db/repositories/pushed-events.ts';
import { openSse, type SseStream } from './sse.ts';

/**
 * A server-sent events response against a real TCP client that stops reading: what the server
 * may hold for it is bounded. Loopback socket buffers take several MiB before Node buffers
 * anything, so the events here are large.
 */

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const padding = 'x'.repeat(64 * 1024);
const bigEvent = (seq: number): StoredPushedEvent => ({
  seq, eventId: String(seq), tradeId: null, type: 'trade.proof_ready', timestamp: '2026-11-24T08:00:00.000Z', data: { padding },
} as unknown as StoredPushedEvent);

describe('a server-sent events stream', () => {
  it('drops a client that stops reading once more than maxBufferedBytes wait for it, keeping no connection and no buffer for it', async () => {
    let stream: SseStream | undefined;
    let closed = false;
    const app = express();
    app.get('/stream', (req, res) => {
      stream = openSse(req, res, { heartbeatMs: 60_000, retryMs: 1_000, maxBufferedBytes: 256 * 1024 });
      stream.onClose(() => { closed = true; });
    });
    const server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    servers.push(server);

    // A client that sends its request and never reads a byte of the answer.
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    client.pause();
    client.write('GET /stream HTTP/1.1\r\nHost: relayer\r\nAccept: text/event-stream\r\n\r\n');
    await expect.poll(() => stream !== undefined).toBe(true);

    let sent = 0;
    while (!closed && sent < 4_000) { // 4,000 x 64 KiB = 250 MiB: far beyond any socket buffer
      stream!.send([bigEvent(++sent)]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(closed).toBe(true);
    // The server let go of the socket (and the output queued on it), though the client never read.
    await expect.poll(() => new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))))).toBe(0);
    client.destroy();
  });
});
