import type { ChainKind } from '../domain/index.ts';
import { readEvmDepositFunding, readEvmPortalOrderState, type DepositFunding, type PortalOrderState } from './evm/order-chain-reads.ts';
import type { ChainClientFactory } from './verify.ts';

export type { DepositFunding, PortalOrderState } from './evm/order-chain-reads.ts';

/** The order chain as these reads need it. */
export interface ReadableChain {
  kind: ChainKind;
  chainId: string;
  rpcUrl: string | null;
}

/**
 * What the service asks an order chain before it reserves liquidity for a Bridger and before it
 * gives a reservation back. `null` means the chain cannot be asked this (a Stellar chain today, or no
 * RPC URL registered): callers decide what that costs. RPC failures throw `RpcUnavailableError`.
 */
export interface OrderChainReader {
  /** `owner`'s balance of `token` and (ERC-20) its allowance to `portal`. */
  depositFunding(chain: ReadableChain, token: string, owner: string, portal: string): Promise<DepositFunding | null>;
  /** The OrderPortal's state of `orderHash`. */
  orderState(chain: ReadableChain, portal: string, orderHash: string): Promise<PortalOrderState | null>;
}

/**
 * Reads over `clients`. Stellar is not read yet: a SEP-41 balance needs a simulated contract call
 * (and the Soroban portal pulls by the Bridger's authorisation, so there is no allowance to read).
 */
export function createOrderChainReader(clients: ChainClientFactory): OrderChainReader {
  return {
    async depositFunding(chain, token, owner, portal) {
      if (chain.kind !== 'EVM' || !chain.rpcUrl) return null;
      return readEvmDepositFunding(clients.evm(chain.rpcUrl), token, owner, portal);
    },
    async orderState(chain, portal, orderHash) {
      if (chain.kind !== 'EVM' || !chain.rpcUrl) return null;
      return readEvmPortalOrderState(clients.evm(chain.rpcUrl), portal, orderHash);
    },
  };
}
