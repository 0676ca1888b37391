/**
 * The source of the package's `@cross-chain-relayer/client/stellar` (client/stellar.js,
 * client/stellar.d.ts): what a Stellar dApp needs to submit the API's signed responses to the
 * Soroban AdManager and OrderPortal with its own wallet, and to sign an unlock the way Freighter
 * signs text. `npm run client:generate` bundles it with esbuild (@stellar/stellar-sdk left to the
 * dApp, a peer dependency; the parts of ethers the order encoding uses inside) and emits its
 * declarations with TypeScript 5; it is not shipped itself.
 *
 * The work is the service's own: chains/stellar/call-args.ts (the contracts' arguments, the
 * `Order` struct as a Soroban map). Two ways to send: the caller's own account as the transaction's
 * source (its signature on the envelope authorises its calls), or a fee payer's account as source
 * with the caller's signed authorisation entries (`authorizeEntry`, or a wallet's `signAuthEntry`).
 */
import { Account, authorizeEntry, hash, rpc, StrKey, TransactionBuilder, xdr, type FeeBumpTransaction, type Keypair, type Transaction } from '@stellar/stellar-sdk';
import { stellarContractCall, stellarTimeoutCall } from '../chains/stellar/call-args.ts';
import { unlockMessage as unlockText } from './flows-entry.ts';

/** The signed actions, as the API's responses are for them (the same names as `./evm`). */
export type StellarAction = 'createAd' | 'fundAd' | 'withdrawFromAd' | 'closeAd' | 'createOrder' | 'lockForOrder' | 'unlock';

/** The calls anyone may make after an order's time is up, with no relayer request. */
export type StellarTimeoutAction = 'refund' | 'releaseLock';

/** An order as the API returns it (`orderParams`): addresses in their chain's spelling, integers as decimal strings. */
export interface OrderParams {
  orderChainToken: string;
  adChainToken: string;
  amount: string;
  orderAmount: string;
  adAmount: string;
  bridger: string;
  orderRecipient: string;
  adId: string;
  adCreator: string;
  adRecipient: string;
  salt: string;
  orderChainId: string;
  orderPortal: string;
  adChainId: string;
  adManager: string;
  lockExpiry: string;
  refundTime: string;
}

/** A signed response of the API for a Soroban contract: the shared signed call data and the action's own fields. */
export interface SignedResponse {
  contractAddress: string;
  authToken: string;
  deadline: string;
  signature: string;
  /**
   * The G... key that signed: the contract checks it is its relayer key (or, during a key rotation, the
   * previous one). Optional in the API's schema (EVM responses have none); a Soroban call throws without it.
   */
  signerPublicKey?: string;
  orderParams?: OrderParams;
  proof?: string;
  [field: string]: unknown;
}

/** What a response does not carry itself. */
export interface CallExtras {
  /** createOrder, lockForOrder, unlock: the order; by default the response's own `orderParams`. */
  orderParams?: OrderParams;
  /** unlock: the proof as 0x hex; by default the response's own `proof`. */
  proof?: string;
}

/**
 * The Soroban operation (`invokeHostFunction`) that submits `signed`, the API's response for
 * `action`, to its AdManager or OrderPortal: the contract's arguments then `auth_token, deadline,
 * signer, signature` (`signer`: the response's `signerPublicKey`). Throws when a field or extra is missing.
 */
export function stellarOperation(action: StellarAction, signed: SignedResponse, extras: CallExtras = {}): xdr.Operation {
  const withOwn = { orderParams: signed.orderParams, proof: signed.proof, ...extras };
  return stellarContractCall(action, signed as unknown as Parameters<typeof stellarContractCall>[1], withOwn);
}

/** The timeout call for an order on Soroban: `refund` (OrderPortal, from refundTime on) or `releaseLock` (AdManager, from lockExpiry on). */
export function stellarTimeoutOperation(action: StellarTimeoutAction, orderParams: OrderParams): xdr.Operation {
  return stellarTimeoutCall(action, orderParams);
}

/** Where and how to build: a Soroban RPC (its URL, or an `rpc.Server`) and the network. */
export interface StellarNetwork {
  /** `publicRpcUrl` of `GET /v1/chains` (or your own RPC), or a ready `rpc.Server`. */
  rpc: string | rpc.Server;
  /** The chain's `networkPassphrase` (`GET /v1/chains`): the network the transaction is signed for. */
  networkPassphrase: string;
  /** Base fee in stroops per operation (default 100); the resource fee comes from the simulation. */
  fee?: string;
  /** Seconds the transaction stays valid (default 300). */
  timeoutSeconds?: number;
  /** Allow an http:// RPC URL (a local network). */
  allowHttp?: boolean;
}

const serverOf = (network: Pick<StellarNetwork, 'rpc' | 'allowHttp'>): rpc.Server =>
  typeof network.rpc === 'string' ? new rpc.Server(network.rpc, { allowHttp: network.allowHttp ?? network.rpc.startsWith('http://') }) : network.rpc;

function passphraseOf(network: StellarNetwork): string {
  if (!network.networkPassphrase) throw new Error('the network passphrase is missing: pass networkPassphrase (GET /v1/chains)');
  return network.networkPassphrase;
}

async function unsignedTransaction(server: rpc.Server, source: string, operation: xdr.Operation, passphrase: string, network: StellarNetwork): Promise<Transaction> {
  const account = await server.getAccount(source);
  return new TransactionBuilder(new Account(account.accountId(), account.sequenceNumber()), { fee: network.fee ?? '100', networkPassphrase: passphrase })
    .addOperation(operation)
    .setTimeout(network.timeoutSeconds ?? 300)
    .build();
}

/**
 * The transaction for `signed` with `source` (the caller's G-address) as its source account,
 * simulated and assembled through the RPC (footprint, resources, fee, and the authorisation the
 * contract asks, which the source's envelope signature covers). The wallet signs it and it is sent:
 * `tx.sign(keypair)` or Freighter's `signTransaction(tx.toXDR(), { networkPassphrase })`, then
 * `server.sendTransaction`. Throws when the simulation fails (its error says why: an expired
 * request, a spent auth token, funds missing).
 */
export async function stellarTransaction(action: StellarAction, signed: SignedResponse, source: string, network: StellarNetwork, extras: CallExtras = {}): Promise<Transaction> {
  const server = serverOf(network);
  const passphrase = passphraseOf(network);
  const tx = await unsignedTransaction(server, source, stellarOperation(action, signed, extras), passphrase, network);
  return server.prepareTransaction(tx) as Promise<Transaction>;
}

/**
 * Signs one authorisation entry for its address, as the caller's wallet does: stellar-sdk's
 * `authorizeEntry(entry, keypair, validUntilLedgerSeq, networkPassphrase)`, or a wallet's own
 * (Freighter `signAuthEntry`). Returns the entry with its signature.
 */
export type AuthorizeEntry = (entry: xdr.SorobanAuthorizationEntry, validUntilLedgerSeq: number) => Promise<xdr.SorobanAuthorizationEntry>;

/**
 * A wallet's `signAuthEntry` as the Freighter API (and SEP-43 wallets) offer it: it takes an
 * authorisation entry's preimage (`HashIdPreimage`, base64 XDR), signs SHA-256 of it with the
 * account's ed25519 key, and answers the signature (base64; older Freighter API versions a byte
 * array). Throws when the person declines.
 */
export type WalletSignAuthEntry = (preimageXdr: string, opts: { networkPassphrase: string; address: string }) => Promise<string | Uint8Array>;

/**
 * The `authorize` of `stellarTransactionWithFeePayer` for a browser wallet: each of `caller`'s
 * authorisation entries is signed by the wallet's `signAuthEntry` (the preimage stellar-sdk's
 * `authorizeEntry` builds for the network and the expiry ledger), the signature checked against
 * `caller`'s key before it goes in. With Freighter:
 * `authorizeWithWallet(async (x, o) => (await signAuthEntry(x, o)).signedAuthEntry!, address, passphrase)`.
 */
export function authorizeWithWallet(signAuthEntry: WalletSignAuthEntry, caller: string, networkPassphrase: string): AuthorizeEntry {
  return (entry, validUntilLedgerSeq) => authorizeEntry(entry, async (preimage) => {
    const signed = await signAuthEntry(preimage.toXDR('base64'), { networkPassphrase, address: caller });
    const signature = typeof signed === 'string' ? Uint8Array.from(atob(signed), (char) => char.charCodeAt(0)) : Uint8Array.from(signed);
    return { signature: signature as never, publicKey: caller };
  }, validUntilLedgerSeq, networkPassphrase);
}

/** Who pays and who authorises, when the caller's own account is not the transaction's source. */
export interface FeePayerOptions {
  /** The fee payer's G-address: the transaction's source (it signs the envelope and pays the fee). */
  feePayer: string;
  /** The caller's G-address: the address whose authorisation entries `authorize` signs. */
  caller: string;
  /** Signs each of the caller's authorisation entries. */
  authorize: AuthorizeEntry;
  /** How many ledgers the signed entries stay valid (default 100, about 8 minutes on the public network). */
  validForLedgers?: number;
}

/** The G... address an authorisation entry asks, or null for the source account's own (no signature to add) or a contract's. */
function entryAddress(entry: xdr.SorobanAuthorizationEntry): string | null {
  if (entry.credentials().switch() !== xdr.SorobanCredentialsType.sorobanCredentialsAddress()) return null;
  const address = entry.credentials().address().address();
  if (address.switch() !== xdr.ScAddressType.scAddressTypeAccount()) return null;
  return StrKey.encodeEd25519PublicKey(address.accountId().ed25519());
}

/**
 * The transaction for `signed` with a fee payer's account as source and the caller's authorisation
 * given by signed entries (the way a wallet-driven dApp sponsors its users' fees): simulated in
 * recording mode, the caller's address entries signed by `authorize`, simulated again with them
 * (the signature checks cost resources) and assembled. The fee payer then signs the envelope and
 * sends it. Throws when a simulation fails, or when an entry asks an address other than the caller's.
 */
export async function stellarTransactionWithFeePayer(
  action: StellarAction, signed: SignedResponse, payer: FeePayerOptions, network: StellarNetwork, extras: CallExtras = {},
): Promise<Transaction> {
  const server = serverOf(network);
  const passphrase = passphraseOf(network);
  const tx = await unsignedTransaction(server, payer.feePayer, stellarOperation(action, signed, extras), passphrase, network);
  const recorded = await server.simulateTransaction(tx);
  if (rpc.Api.isSimulationError(recorded)) throw new Error(`simulation of ${action} failed: ${recorded.error}`);
  const assembled = rpc.assembleTransaction(tx, recorded).build();
  const validUntil = (await server.getLatestLedger()).sequence + (payer.validForLedgers ?? 100);
  const envelope = assembled.toEnvelope();
  const op = envelope.v1().tx().operations()[0]!.body().invokeHostFunctionOp();
  const signedEntries = [];
  for (const entry of op.auth()) {
    const address = entryAddress(entry);
    if (address === null) {
      signedEntries.push(entry);
      continue;
    }
    if (address !== payer.caller) throw new Error(`${action} asks the authorisation of ${address}, not of the caller ${payer.caller}`);
    signedEntries.push(await payer.authorize(entry, validUntil));
  }
  op.auth(signedEntries);
  const withAuth = TransactionBuilder.fromXDR(envelope, passphrase) as Transaction;
  const enforced = await server.simulateTransaction(withAuth);
  if (rpc.Api.isSimulationError(enforced)) throw new Error(`simulation of ${action} with the signed authorisation failed: ${enforced.error}`);
  return rpc.assembleTransaction(withAuth, enforced).build();
}

/** What a transaction ended as, once in a ledger. */
export interface SentTransaction {
  hash: string;
  ledger: number;
}

/**
 * Sends a signed transaction and waits (up to `timeoutMs`, 60 s by default) until its ledger closes;
 * resolves its hash (what `POST .../confirm` takes) and ledger. Throws when it is refused or fails.
 */
export async function sendStellarTransaction(tx: Transaction | FeeBumpTransaction, network: Pick<StellarNetwork, 'rpc' | 'allowHttp'>, timeoutMs = 60_000): Promise<SentTransaction> {
  const server = serverOf(network);
  const sent = await server.sendTransaction(tx);
  if (sent.status !== 'PENDING' && sent.status !== 'DUPLICATE') {
    throw new Error(`transaction ${sent.hash} refused: ${sent.errorResult?.result().switch().name ?? sent.status}`);
  }
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const got = await server.getTransaction(sent.hash);
    if (got.status === rpc.Api.GetTransactionStatus.SUCCESS) return { hash: sent.hash, ledger: got.ledger };
    if (got.status === rpc.Api.GetTransactionStatus.FAILED) throw new Error(`transaction ${sent.hash} failed: ${got.resultXdr.result().switch().name}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`transaction ${sent.hash} not in a ledger after ${timeoutMs} ms`);
}

const SEP53_PREFIX = 'Stellar Signed Message:\n';

/**
 * The text a Stellar wallet signs to unlock: the order hash as `0x` and 64 lower-case hex digits,
 * what Freighter's `signMessage(text)` takes. The API accepts SEP-53 over this text (or over the
 * hash's 32 bytes). Throws on anything but a 32-byte hex hash.
 */
export function unlockMessage(orderHash: string): string {
  return unlockText(orderHash); // the one definition, in ./flows (which carries no stellar-sdk)
}

/** SEP-53's digest of a text message: SHA-256 of "Stellar Signed Message:\n" and the message's UTF-8 bytes. */
export function sep53Digest(message: string): Uint8Array {
  const text = new TextEncoder().encode(SEP53_PREFIX + message);
  return new Uint8Array(hash(text as never));
}

/**
 * The unlock signature a Freighter-style wallet makes, for a key this code holds: SEP-53 over the
 * order hash's `0x` hex text, base64 (what `POST /v1/trades/{id}/unlock` takes as `signature`). With
 * Freighter itself, `await signMessage(unlockMessage(orderHash), { address })` gives the same.
 */
export function signUnlockMessage(keypair: Keypair, orderHash: string): string {
  const signature = keypair.sign(sep53Digest(unlockMessage(orderHash)) as never);
  let binary = '';
  for (const byte of signature) binary += String.fromCharCode(byte);
  return btoa(binary);
}
