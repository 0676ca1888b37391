import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { RpcUnavailableError } from '../chains/errors.ts';
import {
  KeeperLeaseLostError, openKeeperSends, releaseKeeperLease, takeKeeperLease, type KeeperFence,
} from '../db/repositories/keeper-outbox.ts';
import type { KeeperMetrics } from './metrics.ts';

/** What one pass did. */
export interface SenderPass {
  /** False when another sender holds the account's lease: this pass did nothing. */
  leading: boolean;
  /** Sends still queued or waiting to be final after the pass. */
  open: number;
}

/** One keeper account's sender on one chain (any chain kind). */
export interface KeeperSender {
  /**
   * One pass over the account's outbox, under its lease. An RPC outage or a lost lease ends the
   * pass early; the next pass resumes.
   */
  pass(): Promise<SenderPass>;
  /** Gives the lease up so another sender can take over at once. */
  release(): Promise<void>;
}

/**
 * The part every chain kind's sender shares: take or renew the account's lease, run `work` under its
 * fence (nothing when another sender holds it), end the pass quietly on an RPC outage or a lost lease
 * (logged; the next pass resumes where the outbox says), then report the open sends as
 * `relayer_keeper_pending_transactions`.
 */
export function createLeasedSender(
  deps: { knex: Knex; chainId: string; owner: string; leaseSeconds: number; metrics?: KeeperMetrics; logger?: Logger },
  account: () => Promise<string>,
  work: (fence: KeeperFence) => Promise<void>,
): KeeperSender {
  let fence: KeeperFence | undefined;
  return {
    async pass() {
      const who = { chainId: deps.chainId, account: await account(), owner: deps.owner };
      const token = await takeKeeperLease(deps.knex, who, deps.leaseSeconds);
      if (token === undefined) return { leading: false, open: 0 };
      fence = { ...who, token };
      try {
        await work(fence);
      } catch (error) {
        if (!(error instanceof RpcUnavailableError || error instanceof KeeperLeaseLostError)) throw error;
        deps.logger?.warn({ err: error, chainId: deps.chainId }, 'keeper pass ended early; the next pass resumes');
      }
      const open = (await openKeeperSends(deps.knex, who.chainId, who.account)).length;
      deps.metrics?.pending(who.chainId, open);
      return { leading: true, open };
    },
    async release() {
      if (fence) await releaseKeeperLease(deps.knex, fence);
      fence = undefined;
    },
  };
}
