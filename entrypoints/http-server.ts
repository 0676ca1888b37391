import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';

const SHUTDOWN_GRACE_MS = 5_000;

/** A listening HTTP server: where it is and how to stop it gracefully. */
export interface HttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on `host:port` (port 0 picks a free one). */
export async function listen(app: Express, host: string, port: number, logger: Logger, what = 'API'): Promise<HttpServer> {
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  // Keep-alive longer than typical load balancer idle timeouts, so they close first.
  server.keepAliveTimeout = 65_000;
  const bound = (server.address() as AddressInfo).port;
  const reachableHost = host === '0.0.0.0' ? '127.0.0.1' : host;
  logger.info({ port: bound }, `${what} listening`);
  return {
    url: `http://${reachableHost}:${bound}`,
    port: bound,
    // Stop accepting, let in-flight requests finish (up to the grace period), then cut the rest,
    // so nothing behind the server is torn down under a running request.
    close: () =>
      new Promise<void>((resolve) => {
        const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        server.close(() => {
          clearTimeout(grace);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
