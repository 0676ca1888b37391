import { createChains, type Chains, type ChainTarget } from './chains.ts';
import type { DepositFunding, PortalOrderState } from './evm/order-chain-reads.ts';
import { eventOf } from './event-of.ts';
import { NotFinalError, TransactionFailedError, TransactionNotFoundError, WrongContractError } from './errors.ts';
import { rpcUrlsOf } from './providers/urls.ts';

/** What a transaction that carries no deposit (yet) answers: unknown, still pending, failed, sent elsewhere. */
const SHOWS_NO_DEPOSIT = [TransactionNotFoundError, NotFinalError, TransactionFailedError, WrongContractError];

export type { DepositFunding, PortalOrderState } from './evm/order-chain-reads.ts';

/** The order chain as these reads need it. */
export type ReadableChain = ChainTarget;

/**
 * What the service asks an order chain before it reserves liquidity for a Bridger and before it
 * gives a reservation back. `null` means the chain cannot be asked this (no RPC URL registered): callers decide what
 * that costs. RPC failures throw `RpcUnavailableError` / `ChainUnavailableError`.
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
  /**
   * The order hashes of the deposits (`createOrder`'s event) `portal` took in transaction `txHash`
   * once it is in a block, final or not, read from one provider: to find which trade a deposit not yet
   * confirmed to the service is for, never to act on. Empty when the transaction shows none (unknown,
   * still pending, failed, another contract); null when the chain cannot be asked (no RPC URL).
   * RPC failures throw `RpcUnavailableError` / `ChainUnavailableError`.
   */
  depositsIn(chain: ReadableChain, portal: string, txHash: string): Promise<string[] | null>;
}

/** Reads over `chains`, each by its kind's adapter. */
export function createOrderChainReader(chains: Chains = createChains()): OrderChainReader {
  const readable = (chain: ReadableChain) => rpcUrlsOf(chain).length > 0;
  return {
    async depositFunding(chain, token, owner, portal) {
      return readable(chain) ? chains.of(chain).depositFunding(token, owner, portal) : null;
    },
    async orderState(chain, portal, orderHash) {
      return readable(chain) ? chains.of(chain).portalOrderState(portal, orderHash) : null;
    },
    async recipientProblem(chain, token, recipient, amount) {
      return readable(chain) ? chains.of(chain).recipientProblem(token, recipient, amount) : null;
    },
    async depositsIn(chain, portal, txHash) {
      if (!readable(chain)) return null;
      let events;
      try {
        events = await chains.of(chain).includedEvents({ txHash, contractAddress: portal });
      } catch (error) {
        if (SHOWS_NO_DEPOSIT.some((kind) => error instanceof kind)) return [];
        throw error;
      }
      return events.filter((event) => event.event === eventOf('createOrder') && event.args.orderHash)
        .map((event) => event.args.orderHash!.toLowerCase());
    },
  };
}
