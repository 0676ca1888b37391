import type { ChainKind } from '../domain/index.ts';
import type { MirroredTreeState, TreeMirror, TreeKey } from './tree-mirror.ts';
import type { VerificationKeyJson } from '../circuits/verification-key.ts';
import type { BridgeEventName } from './evm/abi.ts';
import type { DepositFunding, PortalOrderState } from './evm/order-chain-reads.ts';
import type { EvmAdState, EventTopics } from './evm/state.ts';
import type { Finality } from './evm/verify.ts';
import type { ActionName, FieldSpec } from './request-schema.ts';
import type { RelayerSigner } from './signers.ts';
import type { DomainNameVersion } from './evm/typed-data.ts';
import type { Providers } from './providers/providers.ts';
import type { OrderParams } from '../domain/order-params.ts';
import type { SignedCallData } from './signed-call-shape.ts';

/**
 * One chain kind behind one interface: everything the service knows that differs between kinds.
 * `chains/<kind>/adapter.ts` implements it and `chains/adapters.ts` lists the kinds; nothing outside
 * chains/<kind>/ compares a chain kind (test/chain-kinds.test.ts). A new kind is a folder and a line there.
 */
export interface ChainAdapter<Client = unknown> {
  readonly kind: ChainKind;
  /** How the kind's wallets sign in: the auth service implements each protocol. */
  readonly signInProtocol: 'SIWE' | 'SEP-10';
  /** What a wallet address of this kind looks like, for error messages ("must be <rule>"). */
  readonly walletAddressRule: string;
  /** A wallet address (who signs) of this kind. */
  isWalletAddress(value: string): boolean;
  /** Any address that can hold or receive tokens here (wallets; contracts where the kind allows). */
  isRecipientAddress(value: string): boolean;
  /** Why `value` cannot be a contract (AdManager, OrderPortal, token) of this kind, or null. */
  contractAddressProblem(value: string): string | null;
  /** The one spelling the service stores and compares; throws on an address invalid for the kind. */
  canonicalAddress(value: string): string;
  /** A transaction hash in the spelling the service stores; undefined when it is not 32 bytes of hex. */
  canonicalTxHash(txHash: string): string | undefined;
  /** Whether `signature` is `address`'s wallet signature over `message` (bytes, or their 0x hex as text); never throws. */
  isWalletSignature(address: string, message: Uint8Array, signature: string): boolean;
  /** Why a registry token entry cannot be one of this kind's tokens, or null. */
  tokenProblem(token: { kind: string; address: string }): string | null;
  /** Problems of a registry chain entry's kind-specific fields, each `field: why`. */
  registryProblems(entry: { networkPassphrase?: string | null; publicRpcUrl?: string | null }): string[];
  /** The kind-specific fields `GET /v1/chains` shows of a chain (never the service's own RPC URLs). */
  publicFields(chain: { networkPassphrase: string | null; publicRpcUrl: string | null }): Record<string, string>;
  /** Signs one request in the kind's layout (EIP-712, or ed25519 over the Stellar byte layout). */
  signRequest(input: SignRequestInput): Promise<SignedRequest>;
  /**
   * The transaction the keeper sends for a trade: a signed unlock with its proof, or a timeout
   * (refund, releaseLock) that needs no request. `to` is the contract, `data` what the kind's sender
   * takes (EVM: the ABI-encoded call; Stellar: the invokeHostFunction operation's base64 XDR).
   */
  keeperCall(call: KeeperCall): { to: string; data: string; value: bigint };
  /** A client of one provider URL (not yet contacted). */
  connect(url: string): Client;
  /** The provider's head (block number, ledger sequence); throws `RpcUnavailableError`, never waits long. */
  head(client: Client): Promise<bigint>;
  /** The reads of `chain` through `providers`, facts read by quorum (see chains/providers/). */
  reads(chain: ChainFacts, providers: Providers<Client>): ChainReads;
}

/** What signing one request needs, the kind-neutral part already assembled by `buildSignedCallData`. */
export interface SignRequestInput {
  target: { chainId: string; contractAddress: string; networkPassphrase?: string };
  primaryType: string;
  fields: FieldSpec[];
  /** Every struct value, header included. */
  values: Record<string, unknown>;
  /** The action's own fields as returned to the caller. */
  returned: Record<string, string>;
  signer: RelayerSigner;
  domain: DomainNameVersion;
}

/** Raised when a request's target does not describe a contract of its chain kind. */
export class CallTargetError extends Error {}

/** The kind's part of a signed request. */
export interface SignedRequest {
  reqHash: string;
  signature: string;
  signerPublicKey?: string;
}

/** The registry facts reads need about a chain. */
export interface ChainFacts {
  kind: ChainKind;
  chainId: string;
  /** Required confirmations (registry `confirmations`, 1 when unset). */
  confirmations?: number;
  /** EVM: `finalized` also waits for the node's finalized block; `depth` (default) trusts the confirmations. */
  finality?: Finality;
  /** The network a transaction is signed for, where the kind names one (Stellar). */
  networkPassphrase?: string | null;
}

/** The timeouts anyone may call (no relayer signature): a deposit's refund, a lock's release. */
export type TimeoutAction = 'refund' | 'releaseLock';

/** What the service issued and now expects to see on chain. */
export interface ExpectedAction {
  txHash: string;
  /** The contract the signed request named (AdManager or OrderPortal). */
  contractAddress: string;
  /** A signed request's action, or a timeout (a lock's release, a deposit's refund) bound by `orderHash`. */
  action: ActionName | TimeoutAction;
  /** Event arguments that must match: at least the issued `reqHash`; `orderHash`/`adId` where the event has them. */
  args: Record<string, string | bigint>;
}

/**
 * A verified event, the same shape for every chain kind. Record it under the unique key
 * `(chainId, txHash, logIndex)` so one event answers one request; keep `block` and `blockHash` to
 * re-check with `isCanonical` before signing anything that depends on it.
 */
export interface VerifiedAction {
  /** The registry chain id the event was verified on. */
  chainId: string;
  txHash: string;
  /** The event's index: in its block (EVM), among its transaction's contract events (Stellar). */
  logIndex: number;
  /** Block number (EVM) or ledger sequence (Stellar), as a decimal string. */
  block: string;
  /** Hash of that block or ledger, 0x hex. */
  blockHash: string;
  /** The account that sent the transaction. */
  from: string;
  event: BridgeEventName;
  /** Every event argument (integers as decimal strings, bytes as 0x hex). */
  args: Record<string, string>;
  confirmations: number;
}

/** An ad as its AdManager holds it. */
export type OnChainAd = EvmAdState;

/**
 * The reads of one chain. Facts the books act on (verification, contract state, the portal's log)
 * are agreed by the chain's `rpcQuorum` providers; RPC failures throw `RpcUnavailableError`, a
 * disagreement `ChainFactsDisagreeError`.
 */
export interface ChainReads {
  /** The event of `expected.action` in `expected.txHash` whose arguments match, final. */
  verify(expected: ExpectedAction): Promise<VerifiedAction>;
  /** Every bridge event `contractAddress` emitted in the successful, final transaction `txHash`. */
  events(ref: Pick<ExpectedAction, 'txHash' | 'contractAddress'>): Promise<VerifiedAction[]>;
  /**
   * Every bridge event `contractAddress` emitted in the successful transaction `txHash` once it is in
   * a block (ledger), final or not, read from one provider: for finding a subject only, never to act
   * on (the books take `verify`/`events`). Throws as `events` does (`NotFinalError` while it is pending).
   */
  includedEvents(ref: Pick<ExpectedAction, 'txHash' | 'contractAddress'>): Promise<VerifiedAction[]>;
  /** Whether `block` still has `blockHash` on the canonical history. */
  isCanonical(ref: Pick<VerifiedAction, 'block' | 'blockHash'>): Promise<boolean>;
  /** Whether a relayer request was carried out (EVM: its authToken is spent; Stellar: its event exists); undefined: cannot tell. */
  requestExecuted(search: RequestSearch): Promise<boolean | undefined>;
  /**
   * The transaction in which `contractAddress` emitted `event` with `topics`, searched from `since`:
   * null when the whole range holds none, undefined when the chain cannot tell (outside its retention).
   */
  findEventTransaction(search: { contractAddress: string; event: BridgeEventName; topics: EventTopics; since: Date }): Promise<string | null | undefined>;
  /** The ad's balances on its AdManager. */
  ad(adManager: string, adId: string): Promise<OnChainAd>;
  /** An order's state number on a contract. */
  orderState(contract: string, orderHash: string): Promise<number>;
  /** The chain's time (unix seconds) as its contracts compare deadlines with it. */
  finalTime(): Promise<bigint>;
  /** `owner`'s balance of `token` and (where the kind has one) its allowance to `portal`. */
  depositFunding(token: string, owner: string, portal: string): Promise<DepositFunding>;
  /** The OrderPortal's state of `orderHash`. */
  portalOrderState(portal: string, orderHash: string): Promise<PortalOrderState>;
  /** Why `recipient` cannot be paid `amount` of `token` here, or null. */
  recipientProblem(token: string, recipient: string, amount: bigint): Promise<string | null>;
  /**
   * Brings the mirrored tree of the chain's portal level with the portal (throws `TreeOutOfSyncError`-like
   * errors from `treeDiffers`) and returns the tree's state as found level. `known`: the tree's state as
   * the caller just read it (then not read again unless leaves are added).
   */
  syncOrderTree(store: TreeMirror, key: TreeKey, treeDiffers: (message: string) => Error, known?: MirroredTreeState): Promise<MirroredTreeState>;
  /** Which of the chain's two contracts check proofs with another verifier than `vk`'s. */
  verifierDifferences(contracts: { role: string; address: string }[], vk: VerificationKeyJson): Promise<string[]>;
  /** Sends a signed transaction (the keeper's slot); resolves to its hash. */
  sendTransaction(signed: string): Promise<string>;
}

/** What the keeper sends: an unlock (its signed request, the order and the proof's bytes) or a timeout. */
export type KeeperCall =
  | { action: 'unlock'; signed: SignedCallData & Record<string, string | number | undefined>; orderParams: OrderParams; proof: string }
  | { action: TimeoutAction; orderParams: OrderParams };

/** A relayer request searched for on chain. */
export interface RequestSearch {
  contractAddress: string;
  action: ActionName;
  reqHash: string;
  authToken: string;
  since: Date;
}
