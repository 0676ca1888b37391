import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../app.ts';
import { securityHeaders } from './security-headers.ts';

/** The headers a one-route app answers with when `middleware` runs first. */
async function headersWith(middleware: RequestHandler): Promise<Record<string, string>> {
  const app = express();
  app.use(middleware);
  app.get('/', (_req, res) => { res.json({ ok: true }); });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await res.arrayBuffer();
    const headers = Object.fromEntries(res.headers);
    delete headers.date;
    return headers;
  } finally {
    server.close();
  }
}

describe('securityHeaders', () => {
  it("answers with exactly helmet's headers for the app's configuration", async () => {
    const ours = await headersWith(securityHeaders(SECURITY_HEADERS));
    expect(ours).toEqual(await headersWith(helmet(SECURITY_HEADERS)));
    expect(ours['content-security-policy']).toContain("default-src 'self'");
    expect(ours).not.toHaveProperty('x-powered-by');
  });

  it('refuses a configuration whose headers depend on the request (a CSP nonce)', () => {
    const nonce = (_req: unknown, res: { locals: { nonce: string } }) => `'nonce-${res.locals.nonce}'`;
    expect(() => securityHeaders({ contentSecurityPolicy: { directives: { scriptSrc: ["'self'", nonce as never] } } })).toThrow(/static/);
  });
});
