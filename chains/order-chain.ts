import type { ChainKind } from '../domain/index.ts';
import { readEvmDepositFunding, readEvmPortalOrderState, type DepositFunding, type PortalOrderState } from './evm/order-chain-reads.ts';
import { stellarRecipientProblem, type StellarTokenKind } from './stellar/recipient.ts';
import { readStellarDepositFunding, readStellarPortalOrderState } from './stellar/views.ts';
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
 * gives a reservation back. `null` means the chain cannot be asked this (no RPC URL registered): callers decide what
 * that costs. RPC failures throw `RpcUnavailableError`.
 */
export interface OrderChainReader {
  /**
   * `owner`'s balance of `token` and (ERC-20) its allowance to `portal`. Stellar: the SEP-41 balance,
   * allowance null (the Soroban portal takes the deposit by the Bridger's authorisation of `create_order`).
   */
  depositFunding(chain: ReadableChain, token: string, owner: string, portal: string): Promise<DepositFunding | null>;
  /** The OrderPortal's state of `orderHash`. */
  orderState(chain: ReadableChain, portal: string, orderHash: string): Promise<PortalOrderState | null>;
  /**
   * Asked of the ad chain at trade create: why `recipient` cannot be paid `amount` of `token` there,
   * or null when it can (or the chain cannot be asked: no RPC URL). Stellar: an account that does not
   * exist (native XLM) or lacks a usable trustline (a classic asset's contract; stellar/recipient.ts).
   * EVM: always null (any address can be paid).
   */
  recipientProblem(chain: ReadableChain, token: string, recipient: string, amount: bigint): Promise<string | null>;
}

/** Reads over `clients`: EVM by `eth_call`, Stellar by simulated calls of the token's and portal's views (stellar/views.ts). */
export function createOrderChainReader(clients: ChainClientFactory): OrderChainReader {
  // A token contract's kind (SAC of XLM, of a classic asset, or its own wasm) never changes.
  const stellarTokenKinds = new Map<string, StellarTokenKind>();
  return {
    async depositFunding(chain, token, owner, portal) {
      if (!chain.rpcUrl) return null;
      if (chain.kind === 'STELLAR') return readStellarDepositFunding(clients.stellar(chain.rpcUrl), token, owner);
      return readEvmDepositFunding(clients.evm(chain.rpcUrl), token, owner, portal);
    },
    async orderState(chain, portal, orderHash) {
      if (!chain.rpcUrl) return null;
      if (chain.kind === 'STELLAR') return readStellarPortalOrderState(clients.stellar(chain.rpcUrl), portal, orderHash);
      return readEvmPortalOrderState(clients.evm(chain.rpcUrl), portal, orderHash);
    },
    async recipientProblem(chain, token, recipient, amount) {
      if (chain.kind !== 'STELLAR' || !chain.rpcUrl) return null;
      return stellarRecipientProblem(clients.stellar(chain.rpcUrl), token, recipient, amount, stellarTokenKinds);
    },
  };
}
