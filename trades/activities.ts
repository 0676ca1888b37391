import type { Knex } from 'knex';
import type { Chains } from '../chains/chains.ts';
import type { OrderChainReader } from '../chains/order-chain.ts';
import type { ChainStateReader } from '../chains/state.ts';
import type { TransactionVerifier } from '../chains/verify.ts';
import type { RegistryCache } from '../db/repositories/registry-cache.ts';
import type { MerkleTreeStore } from '../prover/merkle/store.ts';
import type { ProverPool } from '../prover/pool.ts';
import { depositProver } from '../prover/prove-deposit.ts';
import { applyEvent } from './applier/apply-event.ts';
import { lockWindowOnChain, reservationExpiryOnChain, type ChainReadingDeps } from './applier/chain-readings.ts';
import { proveStep } from './applier/prove-step.ts';
import { askableChain, verifyConfirmation } from './applier/verify-confirmation.ts';
import { systemClock, type Clock } from './clock.ts';
import type { FollowUpsWithin, TradeActivities } from './orchestrator.ts';
import { syncOrderTree } from './tree-sync.ts';

export interface ActivityDeps {
  knex: Knex;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
  merkleStore: MerkleTreeStore;
  /** The proof pool (started on first use). */
  prover: () => ProverPool;
  /** The chains through their providers (the order chain's portal is read to fill tree gaps). */
  chains: Chains;
  /** Asks the order chain whether a deposit happened before its reservation is given back. */
  orderChainReader?: OrderChainReader;
  /**
   * Asks the ad chain, when a lock window's timer fires, whether the order is locked and what time
   * the chain has reached. Without it the window closes on this service's clock.
   */
  chainState?: ChainStateReader;
  /** SIGNED_REQUEST_TTL_SECONDS: bounds how far back a lock nobody reported is looked for. */
  signedRequestTtlSeconds?: number;
  /** The clock a look-again is timed by; the system's when unset. */
  now?: Clock;
  /** The orchestrator's `carryOutWithin`, when it has one (asked on each event: the orchestrator starts after these steps are built). */
  followUpsWithin?: () => FollowUpsWithin | undefined;
}

/**
 * The lifecycle steps both orchestrators run, each idempotent on (trade, step), wired to their
 * dependencies: verification of a reported transaction (applier/verify-confirmation.ts), one
 * database transaction per machine event (applier/apply-event.ts), the chain readings a timer asks
 * for before it applies (applier/chain-readings.ts), and the proof (applier/prove-step.ts over
 * prover/'s `proveDeposit`).
 */
export function createActivities(deps: ActivityDeps): TradeActivities {
  const { knex } = deps;
  const readings: ChainReadingDeps = {
    knex, registryCache: deps.registryCache, verifier: deps.verifier, now: deps.now ?? systemClock,
    signedRequestTtlSeconds: deps.signedRequestTtlSeconds ?? 86_400,
  };
  const prover = depositProver({
    store: deps.merkleStore,
    pool: deps.prover,
    level: async (key, known) => syncOrderTree({
      store: deps.merkleStore, key, chain: await askableChain(deps.registryCache, key.chainId), chains: deps.chains, known,
    }),
  });
  return {
    verifyConfirmation: (input) => verifyConfirmation(deps, input),

    async applyEvent({ tradeId, event, chainEvent, read, carriedOut }) {
      if (event.type === 'LOCK_WINDOW_CLOSED' && deps.chainState) {
        const decided = await lockWindowOnChain(readings, deps.chainState, tradeId, carriedOut);
        if (decided) return decided;
      }
      if (event.type === 'RESERVATION_EXPIRED' && deps.orderChainReader) {
        return reservationExpiryOnChain(readings, deps.orderChainReader, tradeId, read, carriedOut);
      }
      return applyEvent(knex, tradeId, event, { chainEvent, read, carriedOut, within: deps.followUpsWithin?.() });
    },

    generateProof: ({ tradeId, carriedOut }) => proveStep(knex, prover, tradeId, readings.now, carriedOut, deps.followUpsWithin?.()),
  };
}
