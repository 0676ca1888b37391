/**
 * The public types of `@cross-chain-relayer/client/execute` that its parts share: the wallets, the
 * store and its records, the retrying fetch's options. `npm run client:generate` writes them into
 * client/execute.d.ts beside the entry's own.
 */

/** How `retryingFetch` retries. */
export interface RetryingFetchOptions {
  /** The fetch to wrap (default: the global one); e.g. `refreshingFetch(...)`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries after the first attempt (default 5). */
  retries?: number;
  /** The first backoff, doubled after each retry (default 500 ms). */
  baseDelayMs?: number;
  /** The longest wait, whatever Retry-After says (default 30 000 ms). */
  maxDelayMs?: number;
  /** Told before each wait: the attempt that failed, how long it waits, and the status or the error. */
  onRetry?: (info: { attempt: number; delayMs: number; status?: number; error?: unknown }) => void;
}

/** The transactions a trade's Bridger sends, by step. */
export interface TradeTransactions {
  approve?: string;
  deposit?: string;
  adUnlock?: string;
  orderUnlock?: string;
  refund?: string;
}

/** One trade as the store keeps it (plain JSON). */
export interface TradeRecord {
  /** The record's own key in the store. */
  key: string;
  /** The body of POST /v1/trades/create. */
  request: { adId: string; routeId: string; amount: string; bridgerDstAddress: string };
  /** The Idempotency-Key the create is sent under, every time. */
  idempotencyKey: string;
  tradeId?: string;
  /** The create's answer: the signed deposit request (`reqContractDetails`). */
  order?: { chainId: string; chainKind: string; orderHash: string; orderParams: Record<string, string>; [field: string]: unknown };
  tx: TradeTransactions;
  /** When this Bridger first saw the Maker's unlock due (ms since the epoch): the Maker's grace runs from it. */
  makerDueSince?: number;
  /** Set once the trade is over for the Bridger. */
  outcome?: 'SETTLED' | 'REFUNDED' | 'EXPIRED';
  createdAt: string;
  updatedAt: string;
}

/** A store of trade records. Writes must be durable when `put` resolves. */
export interface TradeStore {
  get(key: string): Promise<TradeRecord | undefined>;
  put(record: TradeRecord): Promise<void>;
  list(): Promise<TradeRecord[]>;
}

/** The part of the Web Storage API (`localStorage`) the browser store uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  readonly length: number;
  key(index: number): string | null;
}

/** An EVM transaction as a wallet sends it; `gas` is the limit (absent: the wallet estimates). */
export interface EvmCall {
  to: string;
  data: string;
  value: bigint;
  gas?: bigint;
}

/** What a trade needs of an EVM wallet on one chain. */
export interface EvmWallet {
  /** The account that sends (the Bridger's address on this chain). */
  getAddress(): Promise<string>;
  /** Sends `tx` and resolves its hash as soon as the wallet gives it, before it is mined. */
  send(tx: EvmCall): Promise<string>;
  /** The gas `tx` would use from this account now. */
  estimateGas(tx: EvmCall): Promise<bigint>;
  /** Resolves once `hash` is mined: true when it succeeded, false when it reverted. */
  wait(hash: string, signal?: AbortSignal): Promise<boolean>;
  /** A read-only call (`eth_call` at the latest block): the returned data. */
  call(tx: { to: string; data: string }): Promise<string>;
  /** The latest block's timestamp, in Unix seconds (the chain's clock, which refundTime is read against). */
  latestTimestamp(): Promise<bigint>;
  /** The wallet's signature over the order hash's 32 bytes (EIP-191 `personal_sign`), what an unlock takes. */
  signOrderHash(orderHash: string): Promise<string>;
}

/** What a trade needs of a Stellar wallet. */
export interface StellarWallet {
  /** The account's G-address. */
  address: string;
  /** Signs a transaction (base64 XDR) for `networkPassphrase`; the signed envelope as base64 XDR. */
  signTransaction(transactionXdr: string, options: { networkPassphrase: string }): Promise<string>;
  /** The unlock signature: SEP-53 over the order hash's `0x` hex text, base64. */
  signUnlock(orderHash: string): Promise<string>;
  /**
   * The account's signature (base64) over SHA-256 of a Soroban authorisation entry's preimage
   * (`HashIdPreimage`, base64 XDR), as Freighter's `signAuthEntry` gives it. Needed only with a fee
   * payer (`stellarFeePayer`): the account then authorises its calls by signed entries, not as the source.
   */
  signAuthEntry?(preimageXdr: string, options: { networkPassphrase: string }): Promise<string>;
}

/**
 * The account that pays a Bridger's Soroban fees (a sponsor): the source of its Stellar
 * transactions, which signs their envelopes. A `keypairWallet` or a `freighterWallet` over the
 * sponsor's account is one.
 */
export type StellarFeePayer = Pick<StellarWallet, 'address' | 'signTransaction'>;

/** The part of an ethers v6 Signer (a Wallet, a JsonRpcSigner) that `ethersWallet` uses. */
export interface EthersSignerLike {
  getAddress(): Promise<string>;
  sendTransaction(tx: { to: string; data: string; value: bigint; gasLimit?: bigint }): Promise<{ hash: string }>;
  estimateGas(tx: { to: string; data: string; value: bigint }): Promise<bigint>;
  call(tx: { to: string; data: string }): Promise<string>;
  signMessage(message: Uint8Array | string): Promise<string>;
  provider: {
    getBlock(tag: 'latest'): Promise<{ timestamp: number } | null>;
    waitForTransaction(hash: string, confirms?: number, timeout?: number): Promise<{ status: number | null } | null>;
  } | null;
}

/** The part of the Freighter API (or a SEP-43 wallet) that `freighterWallet` uses; v2+ answers objects, older ones bare values. */
export interface FreighterLike {
  signTransaction(xdr: string, options: { networkPassphrase: string; address: string }): Promise<{ signedTxXdr: string } | string>;
  signMessage(message: string, options: { address: string }): Promise<{ signedMessage: string | Uint8Array | null } | string>;
  /** Freighter's `signAuthEntry` (a fee payer's trades need it): the entry preimage's signature, base64 (older versions: bytes). */
  signAuthEntry?(preimageXdr: string, options: { networkPassphrase: string; address: string }): Promise<{ signedAuthEntry: string | Uint8Array | null } | string>;
}

/** What `keypairWallet` needs of a stellar-sdk Keypair (spelled out: these declarations import no stellar-sdk). */
export interface KeypairLike {
  publicKey(): string;
  sign(data: Uint8Array): Uint8Array;
}
