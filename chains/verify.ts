import type { rpc } from '@stellar/stellar-sdk';
import type { Web3 } from 'web3';
import type { ChainKind } from '../domain/index.ts';
import { EVENT_OF_ACTION, type BridgeEventName } from './evm/abi.ts';
import { createEvmClient } from './evm/rpc.ts';
import { verifyEvmTransaction } from './evm/verify.ts';
import type { ActionName } from './request-schema.ts';
import { createStellarClient, verifyStellarTransaction } from './stellar/verify.ts';

/** The registry facts verification needs about a chain. */
export interface VerifiableChain {
  kind: ChainKind;
  chainId: string;
  rpcUrl: string;
  /** Required confirmations (registry `confirmations`, 1 when unset). */
  confirmations?: number;
}

/** What the service issued and now expects to see on chain. */
export interface ExpectedAction {
  txHash: string;
  /** The contract the signed request named (AdManager or OrderPortal). */
  contractAddress: string;
  action: ActionName;
  /** Event arguments that must match: at least the issued `reqHash`; `orderHash`/`adId` where the event has them. */
  args: Record<string, string | bigint>;
}

/** A verified event, the same shape for both chain kinds. */
export interface VerifiedAction {
  txHash: string;
  /** Block number (EVM) or ledger sequence (Stellar), as a decimal string. */
  block: string;
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

/** Verifies reported transactions; one instance per process keeps one RPC client per endpoint. */
export interface TransactionVerifier {
  verify(chain: VerifiableChain, expected: ExpectedAction): Promise<VerifiedAction>;
}

/**
 * A verifier whose RPC clients come from `clients` (one per endpoint, kept by this instance for
 * its life). `verify` checks that `expected.txHash` performed `expected.action` on the chain:
 * success, right contract, the action's event with the expected arguments, enough confirmations.
 * It throws the typed errors of chains/errors.ts; `NotFinalError` and `RpcUnavailableError` are retryable.
 */
export function createTransactionVerifier(clients: ChainClientFactory = defaultChainClients): TransactionVerifier {
  const evmClients = new Map<string, Web3>();
  const stellarClients = new Map<string, rpc.Server>();
  const cached = <T>(map: Map<string, T>, key: string, make: (key: string) => T): T => {
    let client = map.get(key);
    if (!client) map.set(key, (client = make(key)));
    return client;
  };
  return {
    async verify(chain, expected) {
      const event = EVENT_OF_ACTION[expected.action];
      const confirmations = chain.confirmations ?? 1;
      if (chain.kind === 'EVM') {
        const verified = await verifyEvmTransaction(cached(evmClients, chain.rpcUrl, clients.evm), {
          txHash: expected.txHash,
          contractAddress: expected.contractAddress,
          event,
          args: expected.args,
          confirmations,
        });
        return { ...pick(verified), block: verified.blockNumber.toString() };
      }
      const verified = await verifyStellarTransaction(cached(stellarClients, chain.rpcUrl, clients.stellar), {
        txHash: expected.txHash,
        contractId: expected.contractAddress,
        event,
        args: expected.args,
        confirmations,
      });
      return { ...pick(verified), block: String(verified.ledger) };
    },
  };
}

function pick(verified: Omit<VerifiedAction, 'block'>): Omit<VerifiedAction, 'block'> {
  const { txHash, from, event, args, confirmations } = verified;
  return { txHash, from, event, args, confirmations };
}
