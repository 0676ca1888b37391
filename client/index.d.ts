import type { Client, ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };

/** Every schema of the document by name: `Schemas['Ad']`, `Schemas['Trade']`, `Schemas['Error']`. */
export type Schemas = components['schemas'];

export interface RelayerClientOptions extends ClientOptions {
  /** The access token to send as `Authorization: Bearer`, asked before each request; none: no header. */
  accessToken?: () => string | undefined | Promise<string | undefined>;
}

/** A typed client of the API at `baseUrl`: `client.GET('/v1/ads/{id}', { params: { path: { id } } })`. */
export function createRelayerClient(baseUrl: string, options?: RelayerClientOptions): Client<paths>;
