import net from 'node:net';
import { Transform } from 'node:stream';

/**
 * A TCP relay on a loopback port in front of a real server (Temporal's frontend, an anvil RPC), so
 * a test can make that server unreachable for the processes behind the relay and bring it back:
 * `cut()` resets every open connection and every new one until `restore()`. The server itself keeps
 * running; only the path to it is cut, as a network partition would.
 */
export interface TcpProxy {
  /** host:port to give the clients instead of the server's. */
  address: string;
  port: number;
  cut(): void;
  restore(): void;
  /**
   * Holds back what clients at `address` (an IP) send, on open connections and new ones, until
   * `release()`; the server sees nothing of it meanwhile. Resolves once something from them waits:
   * that client is then stuck on this server, mid-request.
   */
  hold(address: string): Promise<void>;
  /** Lets everything held through, in order, and holds nothing more. */
  release(): void;
  /** Sends new connections to another server (a restarted one on a new port). */
  retarget(target: { host: string; port: number }): void;
  close(): Promise<void>;
}

/** Listens on `listenHost` (loopback unless told; a container network's gateway lets containers in). */
export async function startTcpProxy(target: { host: string; port: number }, listenPort = 0, listenHost = '127.0.0.1'): Promise<TcpProxy> {
  let open = true;
  let current = target;
  let held: { address: string; waiting: (() => void)[]; notify: () => void } | undefined;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (!open) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(current.port, current.host);
    track(upstream);
    // What the client sends passes a gate that `hold` can close for its address (backpressure keeps working).
    const gate = new Transform({
      transform(chunk, _encoding, done) {
        if (held && client.remoteAddress?.replace(/^::ffff:/, '') === held.address) {
          held.waiting.push(() => done(null, chunk));
          held.notify();
        } else {
          done(null, chunk);
        }
      },
    });
    client.pipe(gate).pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, listenHost, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `${listenHost}:${port}`,
    port,
    cut() {
      open = false;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    restore() {
      open = true;
    },
    hold(address) {
      return new Promise<void>((resolve) => {
        held = { address, waiting: [], notify: resolve };
      });
    },
    release() {
      const waiting = held?.waiting ?? [];
      held = undefined;
      for (const pass of waiting) pass();
    },
    retarget(next) {
      current = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
