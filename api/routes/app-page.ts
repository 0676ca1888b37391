import { existsSync } from 'node:fs';
import express, { Router, type RequestHandler } from 'express';
import { errorBody } from '../errors.ts';

/** Where `npm run app:build` (app/build.ts) puts the page; kept here so the API does not import the build tooling. */
export const APP_DIST_DIR = new URL('../../app/dist/', import.meta.url);

/**
 * The page's content security policy: scripts, styles, images and connections from this origin only
 * (the API is this origin), nothing inline, no frames, no plugins, no form posts elsewhere. Wallets are
 * extensions: they inject their providers outside the page's CSP.
 */
export const APP_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "object-src 'none'",
].join('; ');

/**
 * `/app`: the Maker's management view and the Bridger's page (app/), static files built at install
 * (`npm ci` runs `prepare`) or image build, served with APP_CSP. Reads only; `/app` leads to `/app/`.
 * Before the page is built it answers 503 saying how to build it.
 */
export function appPageRouter(dir: URL = APP_DIST_DIR): Router {
  const router = Router();
  const readsOnly: RequestHandler = (req, _res, next) => next(req.method === 'GET' || req.method === 'HEAD' ? undefined : 'router');
  const policy: RequestHandler = (_req, res, next) => {
    res.setHeader('Content-Security-Policy', APP_CSP);
    next();
  };
  router.use('/app', readsOnly, policy, (req, res, next) => {
    if (existsSync(dir)) return next();
    res.status(503).json(errorBody(503, 'the page at /app is not built: run `npm run app:build`', 'SERVICE_UNAVAILABLE'));
  }, express.static(dir.pathname, { index: 'index.html', redirect: true, maxAge: 0, fallthrough: true }));
  return router;
}
