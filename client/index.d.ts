import type { Client, ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
export { followEvents, followTrade, isTerminalEvent, StreamError } from './events.js';
export type { FollowEnd, FollowEventsOptions, FollowOptions, PushedEvent, StreamEvent } from './events.js';
export { confirmUntilFinal, ethereumProof, RelayerCallError, refreshingFetch, retryAfterMs, RETRYABLE_CONFIRM_CODES, sendAndWait, signInWithEthereum, signInWithStellar, stellarProof, TransactionError } from './flows.js';
export type { AuthClient, CallAnswer, ConfirmOptions, Eip1193Provider, SendAndWaitOptions, SignStellarTransaction, TokenRefreshOptions } from './flows.js';

/** Every schema of the document by name: `Schemas['Ad']`, `Schemas['Trade']`, `Schemas['Error']`. */
export type Schemas = components['schemas'];

/** The paths whose 200 answer is a `text/event-stream` (read as text by `GET` unless `parseAs` says otherwise). */
export declare const EVENT_STREAM_PATHS: readonly EventStreamPath[];

/** The event streams' paths. */
export type EventStreamPath = '/v1/events' | '/v1/trades/{id}/events';

/** An operation whose 200 the client reads as the stream's text (the document describes one event of it). */
type ReadAsText<Op> = Op extends { responses: infer R }
  ? Omit<Op, 'responses'> & { responses: Omit<R, 200> & { 200: { headers: { [name: string]: unknown }; content: { 'text/event-stream': string } } } }
  : Op;

/** `paths` as this client answers them: a stream GET's data is the stream's text, not one event. */
export type RelayerPaths = Omit<paths, EventStreamPath> & { [P in EventStreamPath]: Omit<paths[P], 'get'> & { get: ReadAsText<paths[P]['get']> } };

export interface RelayerClientOptions extends ClientOptions {
  /** The access token to send as `Authorization: Bearer`, asked before each request; none: no header. */
  accessToken?: () => string | undefined | Promise<string | undefined>;
}

/** A typed client of the API at `baseUrl`: `client.GET('/v1/ads/{id}', { params: { path: { id } } })`. */
export function createRelayerClient(baseUrl: string, options?: RelayerClientOptions): Client<RelayerPaths>;
