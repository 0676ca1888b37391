/**
 * The source of client/execute.js (`@cross-chain-relayer/client/execute`): one call that carries a
 * whole trade as its Bridger from a quote (`GET /v1/quotes`) to its end, and one that picks it up
 * after a crash from what the store kept. The chains' calls come from ./evm and ./stellar (loaded
 * only for the chain kinds a trade touches), the waits from ./flows and ./events. Bundled by
 * `npm run client:generate`.
 */
import { followTrade } from './events.js';
import { confirmUntilFinal, RelayerCallError, type CallAnswer } from './flows.js';
import type { components } from './schema.d.ts';
import { newIdempotencyKey, retryingFetch as retrying } from './execute-fetch.ts';
import { fileTradeStore as fileStore, localStorageTradeStore as browserStore, memoryTradeStore as memoryStore } from './execute-store.ts';
import {
  eip1193Wallet as fromEip1193, ethersWallet as fromEthers, freighterWallet as fromFreighter, keypairWallet as fromKeypair, stellarSdk,
} from './execute-wallets.ts';
import type { Eip1193Provider } from './flows.js';
import type {
  EthersSignerLike, EvmCall, EvmWallet, FreighterLike, KeypairLike, RetryingFetchOptions, StellarFeePayer, StellarWallet, StorageLike, TradeRecord, TradeStore,
  TradeTransactions,
} from './execute-types.ts';

export type {
  EthersSignerLike, EvmCall, EvmWallet, FreighterLike, KeypairLike, RetryingFetchOptions, StellarFeePayer, StellarWallet, StorageLike, TradeRecord, TradeStore,
  TradeTransactions,
} from './execute-types.ts';

type Schemas = components['schemas'];
/** A trade as `GET /v1/trades/{id}` answers it. */
export type Trade = Schemas['Trade'];
/** A quote as `GET /v1/quotes` answers it. */
export type Quote = Schemas['Quote'];

/** The part of the typed client (`createRelayerClient(url, { accessToken })`, signed in as the Bridger) this uses. */
export interface ExecuteClient {
  GET: (...args: any[]) => Promise<any>;
  POST: (...args: any[]) => Promise<any>;
}

/** The steps of a trade as the Bridger sees them. */
export type TradeStep = 'approve' | 'create' | 'deposit' | 'confirm' | 'lock' | 'unlock-ad' | 'unlock-order' | 'refund' | 'done';

/** One progress event: a step `started`, a transaction `sent` (its hash), the step `done`, or `waiting` on the other party or the clock. */
export interface TradeProgress {
  step: TradeStep;
  status: 'started' | 'sent' | 'done' | 'waiting';
  txHash?: string;
  /** The trade as last read (absent before it is created). */
  trade?: Trade;
}

/** How a trade ended for the Bridger. */
export interface TradeResult {
  key: string;
  tradeId: string;
  outcome: 'SETTLED' | 'REFUNDED' | 'EXPIRED';
  trade: Trade;
  tx: TradeTransactions;
}

export interface ExecuteOptions {
  /** The Bridger's EVM wallet: one for every EVM chain, or one per chain id. Needed when a side of the trade is on an EVM chain. */
  evm?: EvmWallet | ((chainId: string) => EvmWallet | undefined);
  /** The Bridger's Stellar wallet. Needed when a side of the trade is on Stellar. */
  stellar?: StellarWallet;
  /**
   * Another account that pays the Bridger's Soroban fees: the source of its Stellar transactions,
   * signing their envelopes, while the Bridger's wallet signs only its authorisation entries
   * (`signAuthEntry`, which it must then have). Unset, or the Bridger's own address: the Bridger pays.
   */
  stellarFeePayer?: StellarFeePayer;
  /** Where the trade is kept for `resumeTrade` (default: in memory, which a crash loses). */
  store?: TradeStore;
  /** Told every step as it starts, sends and ends. */
  onProgress?: (progress: TradeProgress) => void;
  /** Stops the trade where it is (the store keeps it): the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The record's key in the store (default: a new UUID). */
  key?: string;
  /** Which of the quote's ads (default: the first, the best). */
  adId?: string;
  /** Where the ad chain pays the Bridger (default: the Bridger's wallet address on the ad chain). */
  recipient?: string;
  /** How long the Maker may leave its unlock due before the Bridger takes the ad side itself (default 120 000 ms). */
  makerGraceMs?: number;
  /** The ad side is taken at the latest this long before the lock expires (default 300 000 ms). */
  lockExpiryMarginMs?: number;
  /** The longest wait between two reads of the trade when its stream is quiet (default 5 000 ms). */
  pollMs?: number;
  /** A Stellar RPC to use instead of the chain's `publicRpcUrl`. */
  stellarRpcUrl?: string;
  /** The fetch every call goes through, under `retryingFetch` (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /** How calls are retried (429, 503, network failures). */
  retry?: Omit<RetryingFetchOptions, 'fetch'>;
}

/** A fetch that retries 429, 503 and network failures under one Idempotency-Key, honouring Retry-After and the body's `retryable`. */
export const retryingFetch: (options?: RetryingFetchOptions) => (request: Request) => Promise<Response> = retrying;
/** A store in memory. */
export const memoryTradeStore: () => TradeStore = memoryStore;
/** A store in a browser's localStorage, one item per trade. */
export const localStorageTradeStore: (storage?: StorageLike, prefix?: string) => TradeStore = browserStore;
/** A store in one JSON file (Node), replaced atomically on every write. */
export const fileTradeStore: (path: string) => TradeStore = fileStore;
/** An EVM wallet over an EIP-1193 provider. */
export const eip1193Wallet: (provider: Eip1193Provider, options?: { from?: string; pollMs?: number }) => EvmWallet = fromEip1193;
/** An EVM wallet over an ethers v6 Signer with a provider. */
export const ethersWallet: (signer: EthersSignerLike) => EvmWallet = fromEthers;
/** A Stellar wallet over Freighter's API. */
export const freighterWallet: (freighter: FreighterLike, address: string) => StellarWallet = fromFreighter;

/** A Stellar wallet over a stellar-sdk Keypair (a key this code holds: a server-side Bridger, a test). */
export const keypairWallet: (keypair: KeypairLike) => StellarWallet = fromKeypair;

type Chain = Schemas['Chain'];
type Signed = Record<string, unknown> & { orderParams?: Record<string, string>; proof?: string };

/** Everything a run needs, read once. */
interface Run {
  client: ExecuteClient;
  options: ExecuteOptions;
  store: TradeStore;
  fetch: (request: Request) => Promise<Response>;
  /** The fetch under the retries (the event stream reconnects by itself). */
  inner: (request: Request) => Promise<Response>;
  record: TradeRecord;
  baseUrl?: string;
  chains: Map<string, Chain>;
  trade?: Trade;
  wake?: () => void;
}

const now = () => new Date().toISOString();

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(signal.reason); return; }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function answered<T>(answer: CallAnswer<T>): T {
  if (answer.error !== undefined || answer.data === undefined) throw new RelayerCallError(answer.response.status, answer.error);
  return answer.data;
}

async function save(run: Run): Promise<void> {
  run.record.updatedAt = now();
  await run.options.store!.put(run.record);
}

function tell(run: Run, step: TradeStep, status: TradeProgress['status'], txHash?: string): void {
  run.options.onProgress?.({ step, status, ...(txHash ? { txHash } : {}), ...(run.trade ? { trade: run.trade } : {}) });
}

/** GET through the retrying fetch; remembers the API's base URL for the event stream. */
async function get<T>(run: Run, path: string, params: object = {}): Promise<T> {
  return answered<T>(await run.client.GET(path, { ...params, fetch: run.fetch }));
}

async function post<T>(run: Run, path: string, id: string, body: object): Promise<CallAnswer<T>> {
  return run.client.POST(path, { params: { path: { id } }, body, fetch: run.fetch });
}

async function readTrade(run: Run): Promise<Trade> {
  run.trade = await get<Trade>(run, '/v1/trades/{id}', { params: { path: { id: run.record.tradeId } } });
  return run.trade;
}

function chainOf(run: Run, chainId: string): Chain {
  const chain = run.chains.get(chainId);
  if (!chain) throw new Error(`chain ${chainId} is not among GET /v1/chains`);
  return chain;
}

function evmWallet(run: Run, chainId: string): EvmWallet {
  const evm = run.options.evm;
  const wallet = typeof evm === 'function' ? evm(chainId) : evm;
  if (!wallet) throw new Error(`the trade needs an EVM wallet on chain ${chainId}: pass options.evm`);
  return wallet;
}

function stellarWallet(run: Run): StellarWallet {
  if (!run.options.stellar) throw new Error('the trade needs a Stellar wallet: pass options.stellar');
  return run.options.stellar;
}

function stellarNetwork(run: Run, chainId: string) {
  const chain = chainOf(run, chainId);
  const rpc = run.options.stellarRpcUrl ?? chain.publicRpcUrl;
  if (!rpc || !chain.networkPassphrase) throw new Error(`chain ${chainId} publishes no Soroban RPC: pass options.stellarRpcUrl`);
  return { rpc, networkPassphrase: chain.networkPassphrase };
}

/** The Bridger's address on a chain: the wallet of that chain's kind. */
async function addressOn(run: Run, chainId: string): Promise<string> {
  return chainOf(run, chainId).kind === 'STELLAR' ? stellarWallet(run).address : evmWallet(run, chainId).getAddress();
}

/**
 * Sends a signed response (or a timeout call when `signed` is null) on its chain from the Bridger's
 * wallet; `keep` stores the hash before the wait for its inclusion. EVM: the gas estimate and 30 %
 * (a deposit's gas depends on where its leaf lands in the portal's tree). Resolves the hash.
 */
async function send(run: Run, chainId: string, action: string, signed: Signed | null, keep: (hash: string) => Promise<void>): Promise<string> {
  const signal = run.options.signal;
  const orderParams = run.record.order!.orderParams;
  if (chainOf(run, chainId).kind === 'EVM') {
    const wallet = evmWallet(run, chainId);
    const evm = await import('./evm.js');
    const call: EvmCall = signed
      ? evm.evmTransaction(action as Parameters<typeof evm.evmTransaction>[0], signed as Parameters<typeof evm.evmTransaction>[1], {
        orderParams: orderParams as never,
      })
      : evm.evmTimeoutTransaction(action as 'refund', orderParams as never);
    const gas = ((await wallet.estimateGas(call)) * 130n) / 100n;
    const hash = await wallet.send({ ...call, gas });
    await keep(hash);
    if (!(await wallet.wait(hash, signal))) throw new Error(`${action} ${hash} reverted`);
    return hash;
  }
  const wallet = stellarWallet(run);
  const network = stellarNetwork(run, chainId);
  const [stellar, sdk] = await Promise.all([import('./stellar.js'), stellarSdk()]);
  const payer = feePayerOf(run, wallet);
  const stellarAction = action as Parameters<typeof stellar.stellarTransaction>[0];
  const extras = { orderParams: orderParams as never };
  let unsigned;
  if (!signed) unsigned = await timeoutTransaction(sdk, stellar, (payer ?? wallet).address, network, orderParams);
  else if (payer) {
    // The fee payer is the source; the Bridger's calls (its deposit's transfer included) are authorised by its signed entries.
    const authorize = stellar.authorizeWithWallet(
      (preimage, { networkPassphrase }) => wallet.signAuthEntry!(preimage, { networkPassphrase }), wallet.address, network.networkPassphrase,
    );
    unsigned = await stellar.stellarTransactionWithFeePayer(stellarAction, signed as never, { feePayer: payer.address, caller: wallet.address, authorize }, network, extras);
  } else unsigned = await stellar.stellarTransaction(stellarAction, signed as never, wallet.address, network, extras);
  const signedXdr = await (payer ?? wallet).signTransaction(unsigned.toXDR(), { networkPassphrase: network.networkPassphrase });
  const tx = sdk.TransactionBuilder.fromXDR(signedXdr, network.networkPassphrase);
  const hash = Array.from(tx.hash() as Uint8Array, (byte) => byte.toString(16).padStart(2, '0')).join('');
  await keep(hash);
  await stellar.sendStellarTransaction(tx, network);
  return hash;
}

/** The fee payer when it is another account than the Bridger's; throws when the Bridger's wallet cannot sign entries. */
function feePayerOf(run: Run, wallet: StellarWallet): StellarFeePayer | undefined {
  const payer = run.options.stellarFeePayer;
  if (!payer || payer.address === wallet.address) return undefined;
  if (!wallet.signAuthEntry) throw new Error('a Stellar fee payer needs a Bridger wallet that signs authorisation entries (signAuthEntry)');
  return payer;
}

/** The Soroban refund transaction from `source` (the Bridger, or its fee payer: a refund asks nobody's authorisation), simulated and assembled. */
async function timeoutTransaction(
  sdk: typeof import('@stellar/stellar-sdk'), stellar: typeof import('./stellar.js'), source: string,
  network: { rpc: string; networkPassphrase: string }, orderParams: Record<string, string>,
) {
  const server = new sdk.rpc.Server(network.rpc, { allowHttp: network.rpc.startsWith('http://') });
  const account = await server.getAccount(source);
  const tx = new sdk.TransactionBuilder(account, { fee: '100', networkPassphrase: network.networkPassphrase })
    .addOperation(stellar.stellarTimeoutOperation('refund', orderParams as never)).setTimeout(300).build();
  return server.prepareTransaction(tx);
}

/** ERC-20 on an EVM order chain: approve the OrderPortal for the amount when its allowance falls short (create checks it). */
async function approve(run: Run, route: Schemas['Route']): Promise<void> {
  const token = route.orderToken;
  const chain = chainOf(run, token.chain.chainId);
  if (chain.kind !== 'EVM' || token.kind !== 'ERC20') return;
  const wallet = evmWallet(run, chain.chainId);
  const owner = (await wallet.getAddress()).toLowerCase().replace(/^0x/, '').padStart(64, '0');
  const spender = chain.orderPortalAddress.toLowerCase().replace(/^0x/, '').padStart(64, '0');
  // allowance(address,address)
  const allowance = BigInt(await wallet.call({ to: token.address, data: `0xdd62ed3e${owner}${spender}` }));
  const amount = BigInt(run.record.request.amount);
  if (allowance >= amount) return;
  tell(run, 'approve', 'started');
  const { erc20ApproveTransaction } = await import('./evm.js');
  const hash = await wallet.send(erc20ApproveTransaction(token.address, chain.orderPortalAddress, amount));
  run.record.tx.approve = hash;
  await save(run);
  tell(run, 'approve', 'sent', hash);
  if (!(await wallet.wait(hash, run.options.signal))) throw new Error(`approve ${hash} reverted`);
  tell(run, 'approve', 'done', hash);
}

/** POST /v1/trades/create under the record's key (kept before it is sent): a retry after a lost answer replays the first. */
async function create(run: Run): Promise<void> {
  tell(run, 'create', 'started');
  const answer = await run.client.POST('/v1/trades/create', {
    body: run.record.request, headers: { 'Idempotency-Key': run.record.idempotencyKey }, fetch: run.fetch,
  }) as CallAnswer<Schemas['CreateTradeResponse']>;
  const created = answered(answer);
  run.record.tradeId = created.tradeId;
  run.record.order = created.reqContractDetails as TradeRecord['order'];
  await save(run);
  await readTrade(run);
  tell(run, 'create', 'done');
}

/**
 * Reports a transaction (`/confirm` or `/unlock/confirm`) until the service sees it final. A Stellar
 * transaction the network does not know (422: never sent, or not yet in a ledger) is forgotten, so
 * its step runs again; anything else the service refuses throws.
 */
async function confirm(run: Run, path: string, field: keyof TradeTransactions, step: TradeStep): Promise<boolean> {
  const txHash = run.record.tx[field]!;
  const answer = await confirmUntilFinal(() => post(run, path, run.record.tradeId!, { txHash }), { signal: run.options.signal, retries: 120 });
  if (answer.error !== undefined && answer.response.status === 422) {
    const chainId = field === 'adUnlock' ? run.record.order!.orderParams.adChainId! : run.record.order!.orderParams.orderChainId!;
    if (chainOf(run, chainId).kind === 'STELLAR') {
      delete run.record.tx[field];
      await save(run);
      return false;
    }
  }
  answered(answer);
  await readTrade(run);
  tell(run, step, 'done', txHash);
  return true;
}

async function deposit(run: Run): Promise<void> {
  const order = run.record.order!;
  if (!run.record.tx.deposit) {
    tell(run, 'deposit', 'started');
    await send(run, order.chainId, 'createOrder', order, async (hash) => {
      run.record.tx.deposit = hash;
      await save(run);
      tell(run, 'deposit', 'sent', hash);
    });
    tell(run, 'deposit', 'done', run.record.tx.deposit);
  }
  if (!(await confirm(run, '/v1/trades/{id}/confirm', 'deposit', 'confirm'))) await deposit(run);
}

/** Asks for an unlock (`side` ad or order) once the proof is ready, sends it, and reports it. */
async function unlock(run: Run, side: 'ad' | 'order'): Promise<void> {
  const field = side === 'ad' ? 'adUnlock' : 'orderUnlock';
  const step = side === 'ad' ? 'unlock-ad' : 'unlock-order';
  const order = run.record.order!;
  const chainId = side === 'ad' ? order.orderParams.adChainId! : order.orderParams.orderChainId!;
  if (!run.record.tx[field]) {
    tell(run, step, 'started');
    // The unlock is signed by the wallet that deposited: the Bridger's on the order chain.
    const orderChain = chainOf(run, order.orderParams.orderChainId!);
    const signature = orderChain.kind === 'STELLAR'
      ? await stellarWallet(run).signUnlock(order.orderHash)
      : await evmWallet(run, orderChain.chainId).signOrderHash(order.orderHash);
    const body = side === 'ad' ? { signature, side } : { signature };
    const ask = () => post<Signed>(run, '/v1/trades/{id}/unlock', run.record.tradeId!, body);
    const signed = answered(await confirmUntilFinal(ask, { signal: run.options.signal, retries: 120 }));
    try {
      await send(run, chainId, 'unlock', { ...signed, orderParams: signed.orderParams ?? order.orderParams }, async (hash) => {
        run.record.tx[field] = hash;
        await save(run);
        tell(run, step, 'sent', hash);
      });
    } catch (error) {
      // The Maker's own ad-side unlock can land first (its grace ran out as it sent): the Bridger is paid all the same.
      if (side !== 'ad' || !(await readTrade(run)).bridgerClaimed) throw error;
      delete run.record.tx[field];
      await save(run);
      return;
    }
  }
  await confirm(run, '/v1/trades/{id}/unlock/confirm', field, step);
}

/** After an expiry with a deposit: waits for the order chain's clock to pass refundTime, then refunds. */
async function refund(run: Run): Promise<void> {
  const order = run.record.order!;
  const chainId = order.orderParams.orderChainId!;
  const refundTime = BigInt(order.orderParams.refundTime!);
  const clock = async () => (chainOf(run, chainId).kind === 'EVM' ? evmWallet(run, chainId).latestTimestamp() : BigInt(Math.floor(Date.now() / 1000)));
  tell(run, 'refund', 'waiting');
  for (let left = await clock(); left <= refundTime; left = await clock()) {
    await sleep(Math.min(Number(refundTime - left + 1n) * 1000, run.options.pollMs ?? 5_000), run.options.signal);
  }
  tell(run, 'refund', 'started');
  for (let attempt = 0; ; attempt += 1) {
    try {
      await send(run, chainId, 'refund', null, async (hash) => {
        run.record.tx.refund = hash;
        await save(run);
        tell(run, 'refund', 'sent', hash);
      });
      break;
    } catch (error) {
      // A ledger clock a little behind the wall clock refuses the refund for a few seconds more.
      if (attempt >= 5 || run.options.signal?.aborted) throw error;
      await sleep(run.options.pollMs ?? 5_000, run.options.signal);
    }
  }
  tell(run, 'refund', 'done', run.record.tx.refund);
}

/** Resolves at the trade's next event (its stream), or after `pollMs`, whichever is first. */
function nextChange(run: Run): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(done, run.options.pollMs ?? 5_000);
    function done() {
      clearTimeout(timer);
      run.wake = undefined;
      run.options.signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(run.options.signal!.reason);
    }
    run.wake = done;
    if (run.options.signal?.aborted) aborted();
    else run.options.signal?.addEventListener('abort', aborted, { once: true });
  });
}

/** Follows the trade until it is over for the Bridger, taking each of its turns. */
async function follow(run: Run): Promise<TradeResult['outcome']> {
  const record = run.record;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  run.options.signal?.addEventListener('abort', onAbort, { once: true });
  if (run.baseUrl) {
    // The stream only wakes the loop early; when it fails, the loop still reads the trade every pollMs.
    const streamFetch = ((input: RequestInfo | URL, init?: RequestInit) => run.inner(new Request(input, init))) as typeof fetch;
    void followTrade(record.tradeId!, { baseUrl: run.baseUrl, signal: stop.signal, fetch: streamFetch, onEvent: () => run.wake?.() }).catch(() => undefined);
  }
  let told: string | undefined;
  const waiting = (step: TradeStep) => {
    if (told !== step) tell(run, step, 'waiting');
    told = step;
  };
  try {
    for (;;) {
      run.options.signal?.throwIfAborted();
      const trade = await readTrade(run);
      if (trade.status === 'SETTLED') return 'SETTLED';
      if (trade.status === 'EXPIRED') {
        if (!record.tx.deposit || trade.adCreatorClaimed) return 'EXPIRED';
        if (!record.tx.refund && trade.transactions.some((tx) => tx.step === 'refund')) return 'REFUNDED';
        await refund(run);
        return 'REFUNDED';
      }
      if (trade.status === 'PENDING') {
        await deposit(run);
        continue;
      }
      if (trade.status === 'LOCKED' && trade.unlockDue === 'BRIDGER') {
        await unlock(run, 'order');
        continue;
      }
      if (trade.status === 'LOCKED' && trade.unlockDue === 'MAKER') {
        record.makerDueSince ??= Date.now();
        const lockExpiry = Number(record.order!.orderParams.lockExpiry) * 1000;
        const late = Date.now() >= record.makerDueSince + (run.options.makerGraceMs ?? 120_000)
          || Date.now() >= lockExpiry - (run.options.lockExpiryMarginMs ?? 300_000);
        if (late || record.tx.adUnlock) {
          await unlock(run, 'ad');
          continue;
        }
        await save(run);
        waiting('unlock-ad');
      } else {
        waiting('lock');
      }
      await nextChange(run);
    }
  } finally {
    run.options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

/** Two addresses the same on their chain (EVM: any case). */
const sameAddress = (a: string, b: string) => (a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b);

/** The error `resumeTrade` throws for a trade whose Bridger is not the wallet it was given. */
export class NotTheBridgerError extends Error {
  constructor(readonly tradeId: string, readonly bridgerAddress: string, readonly walletAddress: string) {
    super(`trade ${tradeId} is the Bridger ${bridgerAddress}'s; the wallet given is ${walletAddress}: only the trade's Bridger can carry it on`);
    this.name = 'NotTheBridgerError';
  }
}

/**
 * A record for a trade the store does not hold, rebuilt from the service: the trade, its order
 * (`GET /v1/trades/{id}/params`; while PENDING the signed deposit request, `/deposit-request`), its
 * verified deposit and refund. The wallet on the order chain must be the trade's Bridger.
 */
async function adopt(run: Run): Promise<void> {
  const record = run.record;
  const trade = await readTrade(run);
  const wallet = await addressOn(run, trade.orderChainId);
  if (!sameAddress(wallet, trade.bridgerAddress)) throw new NotTheBridgerError(trade.id, trade.bridgerAddress, wallet);
  const path = { params: { path: { id: trade.id } } };
  const { orderHash, ...orderParams } = await get<Schemas['TradeParams']>(run, '/v1/trades/{id}/params', path);
  record.order = trade.status === 'PENDING'
    ? (await get<Schemas['CreateTradeResponse']>(run, '/v1/trades/{id}/deposit-request', path)).reqContractDetails as TradeRecord['order']
    : { chainId: trade.orderChainId, chainKind: chainOf(run, trade.orderChainId).kind, orderHash, orderParams: orderParams as Record<string, string> };
  record.request = { adId: trade.adId, routeId: trade.routeId, amount: trade.amount, bridgerDstAddress: orderParams.adRecipient };
  for (const tx of trade.transactions) {
    if (tx.step === 'deposit' || tx.step === 'refund') record.tx[tx.step] = tx.txHash;
  }
  await save(run);
}

async function drive(client: ExecuteClient, record: TradeRecord, options: ExecuteOptions): Promise<TradeResult> {
  const inner = options.fetch ?? ((request: Request) => fetch(request));
  let baseUrl: string | undefined;
  const retried = retrying({ ...options.retry, fetch: inner });
  const run: Run = {
    client, options, store: options.store!, record, chains: new Map(), inner,
    fetch: (request) => {
      // The base URL the client was made with, for the event stream: what precedes the path.
      baseUrl ??= request.url.slice(0, request.url.indexOf('/v1/'));
      return retried(request);
    },
  };
  const chains = await get<{ data: Chain[] }>(run, '/v1/chains', { params: { query: { limit: 100 } } });
  for (const chain of chains.data) run.chains.set(chain.chainId, chain);
  run.baseUrl = baseUrl;
  if (record.tradeId && !record.order) await adopt(run);
  if (!record.tradeId) {
    const route = await get<Schemas['Route']>(run, '/v1/routes/{id}', { params: { path: { id: record.request.routeId } } });
    if (!record.request.bridgerDstAddress) {
      record.request.bridgerDstAddress = options.recipient ?? await addressOn(run, route.adToken.chain.chainId);
    }
    // Kept before anything is sent: the create's key is what makes its retry the same request.
    await save(run);
    options.signal?.throwIfAborted();
    await approve(run, route);
    await create(run);
  }
  const outcome = await follow(run);
  record.outcome = outcome;
  await save(run);
  tell(run, 'done', 'done');
  return { key: record.key, tradeId: record.tradeId!, outcome, trade: run.trade!, tx: record.tx };
}

/**
 * Carries a whole trade as its Bridger from `quote` (`GET /v1/quotes`, its first ad unless
 * `options.adId` names another): the ERC-20 allowance and approval, the create under an
 * Idempotency-Key kept in `store` before it is sent, the deposit (gas estimate and 30 %), its
 * confirmation (waiting out NOT_FINAL), then following the trade: the order-side unlock once the
 * Maker's ad side is confirmed, the ad side itself when the Maker leaves it due past `makerGraceMs`
 * (or too near the lock's expiry), and the refund after `refundTime` when the trade expired with a
 * deposit. Each step is told to `onProgress` and kept in `store`, so `resumeTrade` can finish it
 * after a crash or an abort. Resolves how the trade ended; rejects with the API's refusal
 * (`RelayerCallError`), a wallet's error, or the signal's reason.
 */
export async function executeTrade(client: ExecuteClient, quote: Quote, options: ExecuteOptions = {}): Promise<TradeResult> {
  const ad = options.adId ? quote.quotes.find((candidate) => candidate.adId === options.adId) : quote.quotes[0];
  if (!ad) {
    const why = quote.unavailable.map((cause) => cause.message).join('; ');
    throw new Error(options.adId ? `ad ${options.adId} is not in the quote` : `the quote has no ad${why ? `: ${why}` : ''}`);
  }
  const store = options.store ?? memoryStore();
  const record: TradeRecord = {
    key: options.key ?? newIdempotencyKey(),
    request: { adId: ad.adId, routeId: quote.routeId, amount: quote.amount, bridgerDstAddress: options.recipient ?? '' },
    idempotencyKey: newIdempotencyKey(),
    tx: {},
    createdAt: now(),
    updatedAt: now(),
  };
  return drive(client, record, { ...options, store });
}

/** What `resumeTrade` takes: `executeTrade`'s options, and which trade. */
export interface ResumeOptions extends Omit<ExecuteOptions, 'store' | 'adId'> {
  /**
   * The trade to carry on, by its id: the store's record of it, or, when the store holds none (the
   * trade was started on another device, or the store was cleared), a record rebuilt from the
   * service, kept under `key` (default: a new UUID). The wallets must then be the trade's Bridger's.
   */
  tradeId?: string;
}

/**
 * Finishes a trade `executeTrade` started, from what `store` kept: the record `options.key` names,
 * the one of `options.tradeId`, else the most recent one not yet over. A create whose answer was
 * lost is sent again under its kept key (the service replays its answer); a transaction whose hash
 * was kept is reported, not sent again. With `tradeId` and no record of it, the trade is taken up
 * from what the service says (its status, order, verified deposit): the ad side when the Maker's
 * unlock stays due past `makerGraceMs`, the Bridger's unlock, the refund after `refundTime`; it
 * throws `NotTheBridgerError` when the wallet on the order chain is not the trade's Bridger.
 * Resolves undefined when there is nothing to resume.
 */
export async function resumeTrade(client: ExecuteClient, store: TradeStore, options: ResumeOptions = {}): Promise<TradeResult | undefined> {
  const kept = options.key ? await store.get(options.key) : undefined;
  const ofTrade = !kept && options.tradeId ? (await store.list()).find((candidate) => candidate.tradeId === options.tradeId) : undefined;
  const latest = !options.key && !options.tradeId
    ? (await store.list()).filter((candidate) => !candidate.outcome).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))[0]
    : undefined;
  // Only tradeId is known of a trade this store never held: drive() rebuilds the rest from the service.
  const record = kept ?? ofTrade ?? latest ?? (options.tradeId ? {
    key: options.key ?? newIdempotencyKey(), request: { adId: '', routeId: '', amount: '0', bridgerDstAddress: '' }, idempotencyKey: newIdempotencyKey(),
    tradeId: options.tradeId, tx: {}, createdAt: now(), updatedAt: now(),
  } : undefined);
  if (!record) return undefined;
  if (record.outcome) {
    const trade = answered<Trade>(await client.GET('/v1/trades/{id}', { params: { path: { id: record.tradeId } } }));
    return { key: record.key, tradeId: record.tradeId!, outcome: record.outcome, trade, tx: record.tx };
  }
  return drive(client, record, { ...options, store });
}
