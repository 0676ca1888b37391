import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

interface HeaderRecorder {
  setHeader(name: string, value: number | string | readonly string[]): void;
  removeHeader(name: string): void;
}

/**
 * helmet's security headers, worked out once. With a static configuration (no per-request CSP
 * nonces) helmet sets the same headers on every response, yet running its dozen middlewares
 * cost about 40 µs of CPU per request (`npm run bench:api`, docs/benchmarks.md "Read path"). The headers
 * are helmet's own: it runs once, at start-up, against a response that records them.
 */
export function securityHeaders(options: Readonly<HelmetOptions>): RequestHandler {
  // A directive given as a function (a nonce) is computed per request: it cannot be worked out once.
  const csp = options.contentSecurityPolicy;
  const directives = typeof csp === 'object' && csp.directives ? Object.values(csp.directives) : [];
  if (directives.some((value) => typeof value === 'function' || (Array.isArray(value) && value.some((item) => typeof item === 'function')))) {
    throw new Error('securityHeaders needs a static helmet configuration: a CSP directive is a function');
  }
  const set: [string, number | string | readonly string[]][] = [];
  const removed: string[] = [];
  const recorder: HeaderRecorder = {
    setHeader: (name, value) => { set.push([name, value]); },
    removeHeader: (name) => { removed.push(name); },
  };
  let finished = false;
  helmet(options)({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    finished = true;
  });
  if (!finished) throw new Error('securityHeaders needs a helmet configuration that finishes synchronously');
  return (_req, res, next) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
    next();
  };
}
