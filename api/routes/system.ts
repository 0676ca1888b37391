import { Router, type RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { Registry } from 'prom-client';
import swaggerUi from 'swagger-ui-express';
import { errorBody } from '../errors.ts';
import { openApi30Document, openApiDocument } from '../openapi/document.ts';
import { registry, z } from '../openapi/operations.ts';
import { ping } from '../../db/knex.ts';
import type { ChainHealth } from '../../chains/providers/providers.ts';
import type { AppDeps } from '../deps.ts';

const devnetChainSchema = z.object({
  chainId: z.string(),
  name: z.string(),
  state: z.enum(['building', 'starting', 'ready', 'failed']).openapi({
    description: 'building: its binaries are being built (first start); starting: its node starts and its contracts deploy; ' +
      'ready: registered and served; failed: it could not join (detail says why)',
  }),
  detail: z.string().optional(),
  seconds: z.number().int().openapi({ description: 'Seconds since it entered this state' }),
});

const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded', 'unavailable']).openapi({
      description: '`degraded`: the database answers but a chain has fewer usable RPC providers than its quorum (`checks.chains` ' +
        'says which), or a chain of the local devnet has not joined yet (`devnet` says which); requests that need it answer 503 ' +
        'CHAIN_UNAVAILABLE, the rest is served.',
    }),
    checks: z.object({
      db: z.enum(['ok', 'unavailable']),
      chains: z.record(z.string(), z.object({
        status: z.enum(['ok', 'degraded']),
        usable: z.number().int().openapi({ description: 'Providers up and within RPC_MAX_HEAD_LAG_BLOCKS of the median head.' }),
        quorum: z.number().int(),
      })).optional().openapi({ description: 'Each registered chain with providers, by chain id.' }),
    }),
    node: z.string().optional().openapi({
      description: 'The Node.js version this process runs on (a local run only, as `npm start` runs)', example: 'v24.21.0',
    }),
    devnet: z.object({
      ready: z.boolean().openapi({ description: 'True once every chain of the local devnet has joined' }),
      chains: z.array(devnetChainSchema),
    }).optional().openapi({
      description: 'The local devnet of `npm start`: the EVM chains are ready when the service is; the local Stellar network joins when built.',
    }),
    prover: z.object({
      backend: z.enum(['native', 'snarkjs']).openapi({ description: 'What proves now.' }),
      state: z.enum(['building', 'ready', 'failed']).openapi({
        description: 'building: the native prover is being built (first start), snarkjs proves meanwhile and native proofs take over ' +
          'once it is built; ready: `backend` proves, nothing pending; failed: the build failed (detail says why), snarkjs proves.',
      }),
      detail: z.string().optional(),
      seconds: z.number().int().openapi({ description: 'Seconds since it entered this state' }),
    }).optional().openapi({ description: 'The prover of `npm start` (a local run only). It never makes the service degraded: proofs work either way.' }),
  })
  .openapi('Health');

registry.registerPath({
  method: 'get',
  path: '/health', operationId: 'getHealth',
  summary: 'Service health: 200 while the database answers (degraded when a chain is below its provider quorum or still joining), 503 otherwise',
  description: 'Checks PostgreSQL with a bounded query (2 s) and each chain\'s RPC providers (2 s). For load balancers and ' +
    'orchestrators: a degraded chain does not take the process out of service. ' +
    'A local run (`npm start` with its devnet) also names its Node version and each devnet chain\'s state.',
  tags: ['System'],
  responses: {
    200: { description: 'Healthy', content: { 'application/json': { schema: healthSchema } } },
    503: { description: 'A dependency is unavailable', content: { 'application/json': { schema: healthSchema } } },
  },
});
/**
 * Where `/` leads a person who opens the service's address: the page at `/app` (the Maker's view and
 * the Bridger's page, app/); the interactive docs stay at /docs. The OpenAPI entry below reads it too.
 */
export const HOME_PAGE = '/app/';

registry.registerPath({
  method: 'get', path: '/', operationId: 'getHome', summary: `Leads to the service's page: a redirect to ${HOME_PAGE}`,
  description: 'For a person who opens the base URL in a browser; API clients start at /v1.', tags: ['System'],
  responses: {
    302: {
      description: `Found: go to ${HOME_PAGE}`,
      headers: { Location: { description: 'Where the page is', schema: { type: 'string', example: HOME_PAGE } } },
    },
  },
});
registry.registerPath({
  method: 'get',
  path: '/docs',
  operationId: 'getDocs',
  summary: 'Interactive API documentation (works offline)',
  description: 'Swagger UI over this document, served with its own assets.',
  tags: ['System'],
  responses: { 200: { description: 'HTML' } },
});
registry.registerPath({
  method: 'get',
  path: '/openapi.json',
  operationId: 'getOpenApiDocument',
  summary: 'This OpenAPI 3.1 document',
  description: 'Generated from the zod schemas that validate requests; the typed client in client/ is generated from it.',
  tags: ['System'],
  responses: { 200: { description: 'OpenAPI document' } },
});
registry.registerPath({
  method: 'get',
  path: '/docs/openapi-3.0.json',
  operationId: 'getOpenApi30Document',
  summary: 'This document in OpenAPI 3.0',
  description: 'The same operations and schemas spelled in OpenAPI 3.0 (nullable instead of null types, enums a client ' +
    'only reads open to new values), for generators that read only 3.0: Go\'s oapi-codegen, Rust\'s progenitor, ' +
    'openapi-python-client.',
  tags: ['System'],
  responses: { 200: { description: 'OpenAPI 3.0 document' } },
});
registry.registerPath({
  method: 'get', path: '/metrics', operationId: 'getMetrics', summary: 'Prometheus metrics', tags: ['System'],
  description: 'Served on the metrics port (METRICS_PORT), not here: 404 unless METRICS_ON_API_PORT is true.',
  responses: { 200: { description: 'Prometheus text format' }, 404: { description: 'Served on the metrics port (METRICS_PORT)' } },
});

/** Prometheus text of every metric on `registry`. */
export function metricsHandler(registry: Registry): RequestHandler {
  return async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  };
}

/**
 * `/` (a redirect to HOME_PAGE), /health, /docs, /openapi.json, and /metrics only with `metricsOnThisPort` (METRICS_ON_API_PORT):
 * otherwise /metrics answers 404 here and is served by the metrics listener (`api/metrics-app.ts`,
 * METRICS_PORT) or not at all.
 */
export function systemRouter(deps: {
  knex: Knex; metrics: Registry; metricsOnThisPort?: boolean; healthTimeoutMs?: number; chainHealth?: () => Promise<ChainHealth[]>;
  healthDetails?: AppDeps['healthDetails'];
}): Router {
  const router = Router();
  // A browser opening the base URL finds the page rather than a 404. (Another method on `/` is
  // wrongMethodOnLiteralPath's 405: the document lists GET.)
  // No body: a 302 with Location alone, so the answer has no content type the document would have to list.
  router.get('/', (_req, res) => {
    res.status(302).location(HOME_PAGE).end();
  });
  router.get('/health', async (_req, res) => {
    const [db, chainList] = await Promise.all([
      probeDatabase(deps.knex, deps.healthTimeoutMs ?? 2000),
      deps.chainHealth ? deps.chainHealth().catch(() => []) : Promise.resolve(undefined),
    ]);
    const healthy = db === 'ok';
    const chains = chainList?.length
      && Object.fromEntries(chainList.map((c) => [c.chainId, { status: c.degraded ? 'degraded' : 'ok', usable: c.usable, quorum: c.quorum }]));
    const details = deps.healthDetails?.();
    const degraded = (chainList?.some((c) => c.degraded) ?? false) || details?.devnet?.ready === false;
    const status = healthy ? (degraded ? 'degraded' : 'ok') : 'unavailable';
    res.status(healthy ? 200 : 503).json({ status, checks: { db, ...(chains ? { chains } : {}) }, ...details });
  });
  router.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument());
  });
  // Before swagger-ui, which answers every path under /docs with its page.
  router.get('/docs/openapi-3.0.json', (_req, res) => {
    res.json(openApi30Document());
  });
  // swagger-ui-express serves its own bundled assets: the page needs no internet. It answers any
  // method on any path under /docs with the page, so only GET and HEAD reach it. Another method on
  // /docs itself never gets here (wrongMethodOnLiteralPath answers 405 with Allow); on an asset path
  // it falls through to the 404 of an unknown path.
  const readsOnly: RequestHandler = (req, _res, next) => next(req.method === 'GET' || req.method === 'HEAD' ? undefined : 'router');
  router.use('/docs', readsOnly, swaggerUi.serveFiles(openApiDocument()), swaggerUi.setup(openApiDocument(), { customSiteTitle: 'Relayer API' }));
  if (deps.metricsOnThisPort) {
    router.get('/metrics', metricsHandler(deps.metrics));
  } else {
    // An explicit 404: the generic handler would answer GET with 405 for a path the OpenAPI document
    // lists. (Other methods never get here: wrongMethodOnLiteralPath answers them 405.)
    router.get('/metrics', (req, res) => {
      res.status(404).json(errorBody(404, `no route for ${req.method} ${req.path}`, 'ROUTE_NOT_FOUND'));
    });
  }
  return router;
}

async function probeDatabase(knex: Knex, timeoutMs: number): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      ping(knex),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}
