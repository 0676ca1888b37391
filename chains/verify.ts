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

const evmClients = new Map<string, Web3>();
const stellarClients = new Map<string, rpc.Server>();

/**
 * Verifies that `expected.txHash` performed `expected.action` on the chain: success, right
 * contract, the action's event with the expected arguments, enough confirmations. Throws the
 * typed errors of chains/errors.ts; `NotFinalError` and `RpcUnavailableError` are retryable.
 * One RPC client per endpoint is kept for the life of the process.
 */
export async function verifyReportedTransaction(chain: VerifiableChain, expected: ExpectedAction): Promise<VerifiedAction> {
  const event = EVENT_OF_ACTION[expected.action];
  const confirmations = chain.confirmations ?? 1;
  if (chain.kind === 'EVM') {
    let client = evmClients.get(chain.rpcUrl);
    if (!client) evmClients.set(chain.rpcUrl, (client = createEvmClient(chain.rpcUrl)));
    const verified = await verifyEvmTransaction(client, {
      txHash: expected.txHash,
      contractAddress: expected.contractAddress,
      event,
      args: expected.args,
      confirmations,
    });
    return { ...pick(verified), block: verified.blockNumber.toString() };
  }
  let server = stellarClients.get(chain.rpcUrl);
  if (!server) stellarClients.set(chain.rpcUrl, (server = createStellarClient(chain.rpcUrl)));
  const verified = await verifyStellarTransaction(server, {
    txHash: expected.txHash,
    contractId: expected.contractAddress,
    event,
    args: expected.args,
    confirmations,
  });
  return { ...pick(verified), block: String(verified.ledger) };
}

function pick(verified: Omit<VerifiedAction, 'block'>): Omit<VerifiedAction, 'block'> {
  const { txHash, from, event, args, confirmations } = verified;
  return { txHash, from, event, args, confirmations };
}
