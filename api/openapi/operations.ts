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

/** A single-use stream ticket in the query (POST /v1/events/ticket), for EventSource, which cannot send a header. */
export const eventTicketAuth = registry.registerComponent('securitySchemes', 'eventTicket', {
  type: 'apiKey',
  in: 'query',
  name: 'ticket',
  description: 'A single-use ticket from POST /v1/events/ticket (GET /v1/events only).',
});

export { z };
