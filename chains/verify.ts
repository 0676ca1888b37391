import type { ExpectedAction, VerifiedAction } from './adapter.ts';
import { createChains, type Chains, type ChainTarget } from './chains.ts';

export type { ExpectedAction, VerifiedAction } from './adapter.ts';

/** The registry facts verification needs about a chain (its providers, confirmations, finality). */
export type VerifiableChain = ChainTarget;

/** Verifies reported transactions; one instance per process keeps its chains' providers. */
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
 * A verifier over `chains`. `verify` checks that `expected.txHash` performed `expected.action` on the
 * chain: success, right contract, the action's event with the expected arguments, enough
 * confirmations, as the chain's quorum of providers agree. It throws the typed errors of
 * chains/errors.ts; `NotFinalError`, `RpcUnavailableError`, `ChainUnavailableError` and
 * `ChainFactsDisagreeError` are retryable.
 */
export function createTransactionVerifier(chains: Chains = createChains()): TransactionVerifier {
  return {
    verify: (chain, expected) => chains.of(chain).verify(expected),
    events: (chain, ref) => chains.of(chain).events(ref),
    isCanonical: (chain, ref) => chains.of(chain).isCanonical(ref),
  };
}
