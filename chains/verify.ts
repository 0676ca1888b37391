import type { rpc } from '@stellar/stellar-sdk';
import type { Web3 } from 'web3';
import type { ChainKind } from '../domain/index.ts';
import { EVENT_OF_ACTION, EVENT_OF_TIMEOUT, type BridgeEventName } from './evm/abi.ts';
import type { TimeoutAction } from './evm/call-args.ts';
import { createEvmClient } from './evm/rpc.ts';
import { isEvmBlockCanonical, readEvmTransactionEvents, verifyEvmTransaction, type Finality, type VerifiedEvmEvent } from './evm/verify.ts';
import { RpcUnavailableError } from './errors.ts';
import type { ActionName } from './request-schema.ts';
import {
  createStellarClient, isStellarLedgerCanonical, readStellarTransactionEvents, verifyStellarTransaction, type VerifiedStellarEvent,
} from './stellar/verify.ts';

/** The registry facts verification needs about a chain. */
export interface VerifiableChain {
  kind: ChainKind;
  chainId: string;
  rpcUrl: string;
  /** Required confirmations (registry `confirmations`, 1 when unset); 0 is refused (RangeError). */
  confirmations?: number;
  /** EVM: `finalized` also waits for the node's finalized block; `depth` (default) trusts the confirmations. */
  finality?: Finality;
}

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
 * A verified event, the same shape for both chain kinds. Record it under the unique key
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

/** Builds RPC clients; injected so tests and the composition root decide how chains are reached. */
export interface ChainClientFactory {
  evm(rpcUrl: string): Web3;
  stellar(rpcUrl: string): rpc.Server;
}

export const defaultChainClients: ChainClientFactory = { evm: createEvmClient, stellar: createStellarClient };

/** `clients` with one client per RPC URL kept for the life of the returned factory. */
export function cachedChainClients(clients: ChainClientFactory = defaultChainClients): ChainClientFactory {
  const evm = new Map<string, Web3>();
  const stellar = new Map<string, rpc.Server>();
  return {
    evm: (url) => evm.get(url) ?? (evm.set(url, clients.evm(url)), evm.get(url)!),
    stellar: (url) => stellar.get(url) ?? (stellar.set(url, clients.stellar(url)), stellar.get(url)!),
  };
}

/** Verifies reported transactions; one instance per process keeps one RPC client per endpoint. */
export interface TransactionVerifier {
  /**
   * The event of `expected.action` in `expected.txHash` whose arguments match `expected.args`: the
   * subject's own event, with its own log index, even when the transaction carries events of others.
   */
  verify(chain: VerifiableChain, expected: ExpectedAction): Promise<VerifiedAction>;
  /**
   * Every bridge event `contractAddress` emitted in the successful, final transaction `txHash`, in
   * order: for callers that match several subjects against one transaction. Same errors as `verify`
   * except `WrongEventError`.
   */
  events(chain: VerifiableChain, ref: Pick<ExpectedAction, 'txHash' | 'contractAddress'>): Promise<VerifiedAction[]>;
  /**
   * Whether `block` (number or ledger sequence, decimal) still has `blockHash` on the chain's
   * canonical history: false once a reorg replaced it. Throws `RpcUnavailableError`.
   */
  isCanonical(chain: VerifiableChain, ref: Pick<VerifiedAction, 'block' | 'blockHash'>): Promise<boolean>;
}

/**
 * A verifier whose RPC clients come from `clients` (one per endpoint, kept by this instance for
 * its life). `verify` checks that `expected.txHash` performed `expected.action` on the chain:
 * success, right contract, the action's event with the expected arguments, enough confirmations.
 * It throws the typed errors of chains/errors.ts; `NotFinalError` and `RpcUnavailableError` are retryable.
 */
export function createTransactionVerifier(clients: ChainClientFactory = defaultChainClients): TransactionVerifier {
  const client = cachedChainClients(clients);
  return {
    async verify(chain, expected) {
      const event = expected.action in EVENT_OF_TIMEOUT ? EVENT_OF_TIMEOUT[expected.action as TimeoutAction] : EVENT_OF_ACTION[expected.action as ActionName];
      const confirmations = chain.confirmations ?? 1;
      if (chain.kind === 'EVM') {
        const verified = await verifyEvmTransaction(client.evm(chain.rpcUrl), {
          txHash: expected.txHash,
          contractAddress: expected.contractAddress,
          event,
          args: expected.args,
          confirmations,
          finality: chain.finality,
        });
        return fromEvm(chain, verified);
      }
      const verified = await verifyStellarTransaction(client.stellar(chain.rpcUrl), {
        txHash: expected.txHash,
        contractId: expected.contractAddress,
        event,
        args: expected.args,
        confirmations,
      });
      return fromStellar(chain, verified);
    },
    async events(chain, ref) {
      const confirmations = chain.confirmations ?? 1;
      if (chain.kind === 'EVM') {
        const events = await readEvmTransactionEvents(client.evm(chain.rpcUrl), {
          txHash: ref.txHash, contractAddress: ref.contractAddress, confirmations, finality: chain.finality,
        });
        return events.map((event) => fromEvm(chain, event));
      }
      const events = await readStellarTransactionEvents(client.stellar(chain.rpcUrl), {
        txHash: ref.txHash, contractId: ref.contractAddress, confirmations,
      });
      return events.map((event) => fromStellar(chain, event));
    },
    async isCanonical(chain, ref) {
      if (chain.kind === 'EVM') {
        return isEvmBlockCanonical(client.evm(chain.rpcUrl), BigInt(ref.block), ref.blockHash);
      }
      return isStellarLedgerCanonical(client.stellar(chain.rpcUrl), Number(ref.block), ref.blockHash);
    },
  };
}

function fromEvm(chain: VerifiableChain, verified: VerifiedEvmEvent): VerifiedAction {
  // The registry's id must be the node's: an RPC URL pointing at another chain proves nothing.
  if (verified.chainId !== chain.chainId) {
    throw new RpcUnavailableError(`RPC ${chain.rpcUrl} serves chain ${verified.chainId}, not ${chain.chainId}`);
  }
  return { ...pick(verified), chainId: chain.chainId, block: verified.blockNumber.toString() };
}

function fromStellar(chain: VerifiableChain, verified: VerifiedStellarEvent): VerifiedAction {
  return { ...pick(verified), chainId: chain.chainId, block: String(verified.ledger) };
}

function pick(verified: Omit<VerifiedAction, 'block' | 'chainId'>): Omit<VerifiedAction, 'block' | 'chainId'> {
  const { txHash, logIndex, blockHash, from, event, args, confirmations } = verified;
  return { txHash, logIndex, blockHash, from, event, args, confirmations };
}
