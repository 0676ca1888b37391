/**
 * The source of client/flows.js (`@cross-chain-relayer/client/flows`, re-exported by the main
 * entry): what a dApp otherwise writes by hand around the typed client. Confirming a transaction
 * until the service sees it final (409 NOT_FINAL / TRADE_AWAITING, waited out by Retry-After); a
 * `fetch` that refreshes the access token once on a 401 and retries; sending a transaction through
 * any EIP-1193 wallet and waiting for its receipt; SIWE and SEP-10 sign-in (challenge, the wallet's
 * signature, login). No dependency: `fetch`, `TextEncoder` and `setTimeout` are the platform's.
 * Bundled by `npm run client:generate`.
 */
import type { components } from './schema.d.ts';

type Schemas = components['schemas'];
type Challenge = Schemas['EvmChallenge'] | Schemas['StellarChallenge'];
type LoginRequest = Schemas['EvmLogin'] | Schemas['StellarLogin'];

/** An answer of the typed client (openapi-fetch): the data, or the API's error body, and the response. */
export interface CallAnswer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The API refused a call these helpers made: `status` and `body` (the API's `{statusCode, message, error, code}`). */
export class RelayerCallError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    const message = (body as { message?: unknown } | undefined)?.message;
    super(`the relayer API answered ${status}${message ? `: ${Array.isArray(message) ? message.join('; ') : String(message)}` : ''}`);
    this.name = 'RelayerCallError';
    this.status = status;
    this.body = body;
  }
}

/** The codes of a 409 that mean "not yet, ask again": the transaction is not final, or the trade awaits a step. */
export const RETRYABLE_CONFIRM_CODES: readonly string[] = ['NOT_FINAL', 'TRADE_AWAITING'];

export interface ConfirmOptions {
  /** How many times to ask again after a retryable 409 (default 30). */
  retries?: number;
  /** The longest wait between two asks, whatever Retry-After says (default 10 000 ms; at least 1 s is waited). */
  maxDelayMs?: number;
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Told before each wait: the code that answered and how long it waits. */
  onWait?: (code: string, delayMs: number) => void;
}

/** The wait a Retry-After header asks for, in ms (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(signal.reason); return; }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `call` (a confirmation such as `POST /v1/trades/{id}/confirm`) until the service answers
 * something other than a 409 whose `code` is NOT_FINAL or TRADE_AWAITING, waiting what its
 * Retry-After says (clamped to 1 s..`maxDelayMs`) between asks, at most `retries` more times.
 * Returns the last answer as the client gave it (success, another error, or the last retryable 409
 * when the retries ran out): the caller decides what an error means. Rejects only when `signal` aborts.
 */
export async function confirmUntilFinal<T>(call: () => Promise<CallAnswer<T>>, options: ConfirmOptions = {}): Promise<CallAnswer<T>> {
  const retries = options.retries ?? 30;
  const maxDelay = options.maxDelayMs ?? 10_000;
  for (let attempt = 0; ; attempt += 1) {
    options.signal?.throwIfAborted();
    const answer = await call();
    const code = (answer.error as { code?: unknown } | undefined)?.code;
    if (answer.response.status !== 409 || typeof code !== 'string' || !RETRYABLE_CONFIRM_CODES.includes(code) || attempt >= retries) return answer;
    const delay = Math.min(Math.max(retryAfterMs(answer.response.headers.get('retry-after')) ?? 1000, 1000), maxDelay);
    options.onWait?.(code, delay);
    await sleep(delay, options.signal);
  }
}

export interface TokenRefreshOptions {
  /**
   * Gets a new access token (e.g. `POST /v1/auth/refresh` with the refresh token, saved where
   * `accessToken` reads it); undefined when the session is over. Concurrent 401s share one call.
   */
  refresh: () => Promise<string | undefined>;
  /** The fetch to wrap (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A `fetch` for `createRelayerClient(url, { accessToken, fetch })`: a request that carried a bearer
 * token and was answered 401 is sent once more with the token `refresh` gives (the body is kept for
 * it); with no new token, or on a second 401, the 401 is what the caller gets. Several requests
 * refused at once refresh once.
 */
export function refreshingFetch(options: TokenRefreshOptions): (request: Request) => Promise<Response> {
  const inner = options.fetch ?? ((request: Request) => fetch(request));
  let refreshing: Promise<string | undefined> | undefined;
  // What the last refresh replaced and gave: a 401 to a request sent with the replaced token (its
  // answer can arrive after the refresh finished) is first sent again with the new one instead of
  // refreshing again, which would spend the new refresh token for nothing (the API's refresh tokens
  // are single-use). Only that token: a request with any other (another sign-in's) is never re-sent
  // with this one.
  let replaced: string | undefined;
  let latest: string | undefined;
  return async (request) => {
    const sent = /^bearer (.+)$/i.exec(request.headers.get('authorization') ?? '')?.[1];
    const again = sent !== undefined ? request.clone() : undefined;
    const response = await inner(request);
    if (response.status !== 401 || !again) return response;
    if (latest !== undefined && sent === replaced && refreshing === undefined) {
      const withLatest = again.clone();
      withLatest.headers.set('authorization', `Bearer ${latest}`);
      const answer = await inner(withLatest);
      if (answer.status !== 401) return answer;
    }
    refreshing ??= options.refresh().then((fresh) => {
      [replaced, latest] = [sent, fresh];
      return fresh;
    }).finally(() => { refreshing = undefined; });
    const token = await refreshing.catch(() => undefined);
    if (!token) return response;
    again.headers.set('authorization', `Bearer ${token}`);
    return inner(again);
  };
}

/** An EIP-1193 provider: the one interface every injected EVM wallet (and ethers' BrowserProvider source) exposes. */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | object }): Promise<unknown>;
}

/** A transaction sent by `sendAndWait` reverted, or was not mined in time; `hash` is its hash. */
export class TransactionError extends Error {
  readonly hash: string;
  readonly reason: 'reverted' | 'timeout';
  constructor(hash: string, reason: 'reverted' | 'timeout') {
    super(reason === 'reverted' ? `transaction ${hash} reverted` : `transaction ${hash} was not mined in time`);
    this.name = 'TransactionError';
    this.hash = hash;
    this.reason = reason;
  }
}

export interface SendAndWaitOptions {
  /** The sending account (default: the wallet's first of `eth_accounts`). */
  from?: string;
  /** Told the hash as soon as the wallet gives it, before it is mined (keep it: confirm takes it). */
  onSent?: (hash: string) => void;
  /** How long to wait for the receipt (default 120 000 ms) and between polls (default 500 ms). */
  timeoutMs?: number;
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Sends `tx` (what `evmTransaction` returns: `{ to, data, value? }`) with `eth_sendTransaction`
 * through `provider` and polls `eth_getTransactionReceipt` (EIP-1193 has no subscription for it)
 * until it is mined. Resolves the hash of a successful transaction; throws `TransactionError` when it
 * reverted or was not mined within `timeoutMs`, and the wallet's own error (4001: the person
 * rejected it) as the wallet threw it.
 */
export async function sendAndWait(provider: Eip1193Provider, tx: { to: string; data: string; value?: bigint }, options: SendAndWaitOptions = {}): Promise<string> {
  const from = options.from ?? ((await provider.request({ method: 'eth_accounts' })) as string[])[0];
  if (!from) throw new Error('the wallet shared no account (eth_accounts is empty): ask it with eth_requestAccounts first');
  const hash = (await provider.request({
    method: 'eth_sendTransaction',
    params: [{ from, to: tx.to, data: tx.data, value: `0x${(tx.value ?? 0n).toString(16)}` }],
  })) as string;
  options.onSent?.(hash);
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const receipt = (await provider.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as { status?: string } | null;
    if (receipt) {
      if (receipt.status !== '0x1') throw new TransactionError(hash, 'reverted');
      return hash;
    }
    if (Date.now() >= deadline) throw new TransactionError(hash, 'timeout');
    await sleep(options.pollMs ?? 500, options.signal);
  }
}

/** The part of the typed client the sign-in helpers use (any `createRelayerClient(...)` has it). */
export interface AuthClient {
  POST(path: '/v1/auth/challenge', init: { body: Schemas['ChallengeRequest'] }): Promise<CallAnswer<Challenge>>;
  POST(path: '/v1/auth/login', init: { body: LoginRequest }): Promise<CallAnswer<Schemas['LoginResponse']>>;
}

const utf8Hex = (text: string): string => `0x${Array.from(new TextEncoder().encode(text), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;

async function challenge(client: AuthClient, address: string, chainKind: 'EVM' | 'STELLAR'): Promise<Challenge> {
  const answer = await client.POST('/v1/auth/challenge', { body: { address, chainKind } });
  if (answer.error !== undefined || answer.data === undefined) throw new RelayerCallError(answer.response.status, answer.error);
  if (answer.data.chainKind !== chainKind) throw new Error(`the service answered a ${answer.data.chainKind} challenge to a ${chainKind} one`);
  return answer.data;
}

async function login(client: AuthClient, body: LoginRequest): Promise<Schemas['LoginResponse']> {
  const answer = await client.POST('/v1/auth/login', { body });
  if (answer.error !== undefined || answer.data === undefined) throw new RelayerCallError(answer.response.status, answer.error);
  return answer.data;
}

/**
 * The SIWE proof of `address` (the body of `POST /v1/auth/login` or `/v1/auth/link`): the
 * service's challenge message, signed by the wallet with `personal_sign` (EIP-191, the text as
 * UTF-8 hex). Throws `RelayerCallError` when the API refuses, the wallet's error when it does.
 */
export async function ethereumProof(client: AuthClient, provider: Eip1193Provider, address: string): Promise<Schemas['EvmLogin']> {
  const message = (await challenge(client, address, 'EVM') as Schemas['EvmChallenge']).message;
  const signature = (await provider.request({ method: 'personal_sign', params: [utf8Hex(message), address] })) as string;
  return { chainKind: 'EVM', message, signature };
}

/** Signs in `address` with SIWE through an EIP-1193 wallet (`ethereumProof` then login): the tokens and the user. */
export async function signInWithEthereum(client: AuthClient, provider: Eip1193Provider, address: string): Promise<Schemas['LoginResponse']> {
  return login(client, await ethereumProof(client, provider, address));
}

/**
 * Co-signs a SEP-10 challenge transaction (base64 XDR) for the passphrase of the network it is on;
 * returns the signed envelope. Freighter: `(xdr, networkPassphrase) => signTransaction(xdr, { networkPassphrase, address })`
 * and its `signedTxXdr`; with a key: `TransactionBuilder.fromXDR(xdr, passphrase)`, `sign(keypair)`, `toXDR()`.
 */
export type SignStellarTransaction = (transactionXdr: string, networkPassphrase: string) => Promise<string>;

/** The SEP-10 proof of the Stellar account `address` (the body of login or link): the challenge, co-signed by `sign`. */
export async function stellarProof(client: AuthClient, address: string, sign: SignStellarTransaction): Promise<Schemas['StellarLogin']> {
  const sent = await challenge(client, address, 'STELLAR') as Schemas['StellarChallenge'];
  return { chainKind: 'STELLAR', transaction: await sign(sent.transaction, sent.networkPassphrase) };
}

/** Signs in the Stellar account `address` with SEP-10 (`stellarProof` then login): the tokens and the user. */
export async function signInWithStellar(client: AuthClient, address: string, sign: SignStellarTransaction): Promise<Schemas['LoginResponse']> {
  return login(client, await stellarProof(client, address, sign));
}

/**
 * The text a Stellar wallet signs to unlock (Freighter's `signMessage(text)`, SEP-53): the order hash
 * as `0x` and 64 lower-case hex digits. The API accepts SEP-53 over this text (or over the hash's 32
 * bytes). Here, with no dependency, for a page that keeps @stellar/stellar-sdk out of its first
 * bundle (`./stellar` exports the same). Throws on anything but a 32-byte hex hash.
 */
export function unlockMessage(orderHash: string): string {
  if (!/^0x[0-9a-fA-F]{64}$/.test(orderHash)) throw new Error(`not an order hash: '${orderHash.slice(0, 80)}'`);
  return orderHash.toLowerCase();
}
