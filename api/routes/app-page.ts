import { existsSync } from 'node:fs';
import express, { Router, type RequestHandler } from 'express';
import type { Knex } from 'knex';
import { listPublicRpcUrls } from '../../db/repositories/chains.ts';
import { errorBody } from '../errors.ts';

/** Where `npm run app:build` (app/build.ts) puts the page; kept here so the API does not import the build tooling. */
export const APP_DIST_DIR = new URL('../../app/dist/', import.meta.url);

/**
 * The page's content security policy: scripts, styles, images and connections from this origin only
 * (the API is this origin), nothing inline, no frames, no plugins, no form posts elsewhere. Wallets are
 * extensions: they inject their providers outside the page's CSP. The one addition is `connect-src`'s
 * chain RPC URLs the operator publishes in the registry (`publicRpcUrl`, GET /v1/chains): a Stellar
 * transaction is simulated and sent by the page to the chain's Soroban RPC, and a relaying proxy in the
 * service would be a new attack surface. Each URL is admitted exactly (origin and path), nothing else.
 */
export function appCsp(publicRpcUrls: readonly string[] = []): string {
  const rpc = publicRpcUrls.flatMap((url) => {
    const source = cspSource(url);
    return source === undefined ? [] : [source];
  });
  return [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", ["connect-src 'self'", ...rpc].join(' '),
    "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "object-src 'none'",
  ].join('; ');
}

/** The CSP with no chain RPC URL: what the page gets when the registry publishes none. */
export const APP_CSP = appCsp();

/**
 * `url` as a CSP source expression admitting that URL only (http(s), origin and path, no query), or
 * undefined when it is not one (a registry value never widens the policy or adds a directive).
 */
function cspSource(url: string): string | undefined {
  let parsed: URL;
  try { parsed = new URL(url); } catch { return undefined; }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  const source = `${parsed.origin}${parsed.pathname}`;
  // new URL percent-encodes spaces; ';', ',' and quotes (which separate directives, policies, keywords) are refused.
  return /^[A-Za-z0-9\-._~:/@!$&()*+=%]+$/.test(source) ? source : undefined;
}

/**
 * `/app`: the Maker's management view and the Bridger's page (app/), static files built at install
 * (`npm ci` runs `prepare`) or image build, served with appCsp over the registry's chain RPC URLs as
 * they are when the page is served. Reads only; `/app` leads to `/app/`.
 * Before the page is built it answers 503 saying how to build it.
 */
export function appPageRouter(deps: { knex: Knex; dir?: URL }): Router {
  const dir = deps.dir ?? APP_DIST_DIR;
  const router = Router();
  const readsOnly: RequestHandler = (req, _res, next) => next(req.method === 'GET' || req.method === 'HEAD' ? undefined : 'router');
  const policy: RequestHandler = async (_req, res, next) => {
    try {
      res.setHeader('Content-Security-Policy', appCsp(await listPublicRpcUrls(deps.knex)));
      next();
    } catch (error) {
      next(error);
    }
  };
  router.use('/app', readsOnly, policy, (_req, res, next) => {
    if (existsSync(dir)) return next();
    res.status(503).json(errorBody(503, 'the page at /app is not built: run `npm run app:build`', 'SERVICE_UNAVAILABLE'));
  }, express.static(dir.pathname, { index: 'index.html', redirect: true, maxAge: 0, fallthrough: true }));
  return router;
}
