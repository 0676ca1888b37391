import { extendZodWithOpenApi, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// `.openapi()` on every zod schema: the same schemas validate requests and describe them.
extendZodWithOpenApi(z);

/**
 * The one registry every router module adds its paths to at import time; `openapi/document.ts`
 * turns it into the OpenAPI 3.1 document served at /openapi.json.
 */
export const registry = new OpenAPIRegistry();

export const bearerAuth = registry.registerComponent('securitySchemes', 'bearerAuth', {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'JWT',
});

export { z };
