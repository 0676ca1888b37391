// The Cross-Chain Liquidity Relayer API client: openapi-fetch over the types generated from the
// service's OpenAPI document (schema.d.ts). Types: index.d.ts.
import createClient from 'openapi-fetch';

/**
 * A client for the API at `baseUrl`. `accessToken` (a function, so a refreshed token is picked up)
 * is sent as `Authorization: Bearer` on every request when it returns one.
 */
export function createRelayerClient(baseUrl, options = {}) {
  const { accessToken, ...clientOptions } = options;
  const client = createClient({ baseUrl, ...clientOptions });
  if (accessToken) {
    client.use({
      async onRequest({ request }) {
        const token = await accessToken();
        if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
        return request;
      },
    });
  }
  return client;
}
