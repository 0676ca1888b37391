import { Router } from 'express';
import { AppError } from '../errors.ts';
import { bearerAuth, registry } from '../openapi/registry.ts';
import { errorResponses } from '../schemas/common.ts';

/**
 * Endpoints of the spec that later issues build. They are in the OpenAPI document, marked
 * planned, and answer 501 in the spec's error body, so clients see the whole contract today.
 * An issue that builds one removes it from this list.
 */
const PLANNED: { method: 'get' | 'post' | 'patch'; path: string; summary: string; auth: boolean }[] = [
];

for (const endpoint of PLANNED) {
  registry.registerPath({
    method: endpoint.method,
    path: endpoint.path,
    tags: ['Planned'],
    summary: `[planned] ${endpoint.summary}`,
    description: 'Part of the API contract, not built yet: answers 501 Not Implemented.',
    security: endpoint.auth ? [{ [bearerAuth.name]: [] }] : [],
    responses: errorResponses(501),
  });
}

/** Answers every planned endpoint with 501. */
export function plannedRouter(): Router {
  const router = Router();
  for (const endpoint of PLANNED) {
    const expressPath = endpoint.path.replace(/^\/v1/, '').replace(/\{([^}]+)\}/g, ':$1');
    router[endpoint.method](expressPath, () => {
      throw new AppError(501, `${endpoint.method.toUpperCase()} ${endpoint.path} is not implemented yet`);
    });
  }
  return router;
}
