import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP pass-through that answers CORS as an RPC serving browser dApps must (every origin, method
 * and header admitted; a preflight answered 204), for a browser test in front of the
 * devnet's Soroban node, which answers no preflight and sends no Access-Control-* header: a page
 * served by the service (another origin) could not read its answers. Requests and answers pass
 * unchanged otherwise.
 */
export interface CorsProxy { url: string; close(): Promise<void> }

export async function startCorsProxy(target: string): Promise<CorsProxy> {
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': '*',
    'access-control-max-age': '600',
  };
  const server: Server = createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors);
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const answer = await fetch(new URL(req.url ?? '/', target), {
          method: req.method, headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
        });
        res.writeHead(answer.status, { ...cors, 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await answer.arrayBuffer()));
      } catch (error) {
        res.writeHead(502, cors);
        res.end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
