// The Cross-Chain Liquidity Relayer API client: openapi-fetch over the types generated from the
// service's OpenAPI document (schema.d.ts), and the event-stream helpers (events.js). Types: index.d.ts.
import createClient from 'openapi-fetch';

export { followEvents, followTrade, isTerminalEvent, StreamError } from './events.js';
export { confirmUntilFinal, ethereumProof, RelayerCallError, refreshingFetch, retryAfterMs, RETRYABLE_CONFIRM_CODES, sendAndWait, signInWithEthereum, signInWithStellar, stellarProof, TransactionError } from './flows.js';

/** The operations whose 200 is a `text/event-stream` (client.test.ts holds this list equal to the document's). */
export const EVENT_STREAM_PATHS = ['/v1/events', '/v1/trades/{id}/events'];

/**
 * A client for the API at `baseUrl`. `accessToken` (a function, so a refreshed token is picked up)
 * is sent as `Authorization: Bearer` on every request when it returns one. A GET of an event stream
 * reads its body as text unless told otherwise (`parseAs: 'stream'` for the raw bytes): it is not
 * JSON. To follow a stream live, use `followTrade` / `followEvents`.
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
  const get = client.GET.bind(client);
  client.GET = (path, init = {}) => get(path, EVENT_STREAM_PATHS.includes(path) && init.parseAs === undefined ? { ...init, parseAs: 'text' } : init);
  return client;
}
