import { createServer } from 'node:net';

/**
 * A loopback port free right now, for a child process or SDK that needs a number before it
 * listens (another process may take it before then: callers that can, retry).
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
