import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { RelayerSigner } from '../chains/signers.ts';
import type { ChainKind } from '../domain/chain-kind.ts';
import type { KeeperMetrics } from './metrics.ts';
import { createEvmKeeperSender } from './evm/sender.ts';
import { createKeeperEvmRpc } from './evm/rpc.ts';
import type { KeeperSender } from './leased-pass.ts';
import { chainsWithOpenKeeperSends } from '../db/repositories/keeper-outbox.ts';
import { createStellarKeeperSender } from './stellar/sender.ts';
import { createKeeperStellarRpc } from './stellar/rpc.ts';

/** A chain as the keeper needs it from the registry. */
export interface KeeperChain {
  kind: ChainKind;
  chainId: string;
  rpcUrl: string | null;
  rpcUrls: string[] | null;
  confirmations: number;
  /** Stellar: the network passphrase its transactions are signed for (a chain without one has no sender). */
  networkPassphrase?: string | null;
}

/** The sender settings of KEEPER_* (config/concerns/keeper.ts). */
export interface KeeperSettings {
  replaceAfterSeconds: number;
  maxFeeGwei: number;
  /** KEEPER_STELLAR_MAX_FEE_STROOPS: the highest whole fee of one Stellar transaction, fee bumps included. */
  stellarMaxFeeStroops: number;
  leaseSeconds: number;
  pollSeconds: number;
}

export interface KeeperRunnerDeps {
  knex: Knex;
  /** The registered chains, read on each pass (the registry may change while the process runs). */
  chains: () => Promise<KeeperChain[]>;
  signer: RelayerSigner;
  settings: KeeperSettings;
  metrics?: KeeperMetrics;
  logger?: Logger;
  /**
   * Before the senders, in a process that also signs requests (the embedded run): what is owed is
   * judged and given its call (trades' `prepareKeeperSends`). Elsewhere the api does it.
   */
  prepare?: () => Promise<unknown>;
  /** After the senders: the final sends handed to their trades (trades' `reportKeeperSends`). */
  report?: () => Promise<unknown>;
}

/** A chain's sender, or undefined when the chain lacks what its kind needs to send. */
type SenderFactory = (deps: KeeperRunnerDeps, chain: KeeperChain, urls: string[], owner: string) => KeeperSender | undefined;

/** How each chain kind sends. */
const SENDERS: Record<ChainKind, SenderFactory> = {
  EVM: (deps, chain, urls, owner) => createEvmKeeperSender({
    knex: deps.knex, rpc: createKeeperEvmRpc(urls), signer: deps.signer,
    chain: { chainId: chain.chainId, confirmations: chain.confirmations }, settings: deps.settings,
    owner, metrics: deps.metrics, logger: deps.logger,
  }),
  STELLAR: (deps, chain, urls, owner) => {
    if (!chain.networkPassphrase) return undefined;
    const { replaceAfterSeconds, stellarMaxFeeStroops, leaseSeconds } = deps.settings;
    return createStellarKeeperSender({
      knex: deps.knex, rpc: createKeeperStellarRpc(urls), signer: deps.signer,
      chain: { chainId: chain.chainId, confirmations: chain.confirmations, networkPassphrase: chain.networkPassphrase },
      settings: { replaceAfterSeconds, maxFeeStroops: stellarMaxFeeStroops, leaseSeconds }, owner, metrics: deps.metrics, logger: deps.logger,
    });
  },
};

/** How often a chain with nothing to send is passed anyway (its balance gauge read). */
const IDLE_PASS_MS = 60_000;

/** The keeper's senders running in this process. */
export interface KeeperRunner {
  /** One pass of every chain's sender now (also what the timer runs). */
  passAll(): Promise<void>;
  /** Stops the timer, waits for the pass under way and gives every lease up. */
  stop(): Promise<void>;
}

/**
 * Runs one sender per registered chain whose kind has one, each pass every KEEPER_POLL_SECONDS; a
 * chain's failing pass is logged and retried at the next. Other processes may run the same: each
 * account's lease lets one sender at a time act.
 */
export function startKeeperRunner(deps: KeeperRunnerDeps): KeeperRunner {
  const owner = `keeper-${randomUUID()}`;
  const senders = new Map<string, KeeperSender | undefined>();
  let running: Promise<void> | undefined;
  let stopped = false;
  const step = async (name: string, work: (() => Promise<unknown>) | undefined) => {
    try {
      await work?.();
    } catch (error) {
      deps.logger?.error({ err: error }, `keeper ${name} failed; retried at the next pass`);
    }
  };
  const passAll = async () => {
    await step('preparation', deps.prepare);
    await sendAll();
    await step('report', deps.report);
  };
  const lastPass = new Map<string, number>();
  const sendAll = async () => {
    // A chain with nothing queued or in flight is passed over (no lease taken, no chain read) but for
    // one pass a minute that keeps its balance gauge fresh: an idle keeper costs the database almost nothing.
    const open = new Set(await chainsWithOpenKeeperSends(deps.knex));
    for (const chain of await deps.chains()) {
      const factory = SENDERS[chain.kind];
      const urls = chain.rpcUrls ?? (chain.rpcUrl ? [chain.rpcUrl] : []);
      if (!factory || urls.length === 0) continue;
      const key = `${chain.chainId} ${urls.join(' ')} ${chain.confirmations} ${chain.networkPassphrase ?? ''}`;
      if (!senders.has(key)) {
        senders.set(key, factory(deps, chain, urls, owner));
        if (senders.get(key)) deps.metrics?.chainKnown(chain.chainId);
      }
      const sender = senders.get(key);
      if (!sender) continue;
      const now = Date.now();
      if (!open.has(chain.chainId) && now - (lastPass.get(key) ?? 0) < IDLE_PASS_MS) continue;
      lastPass.set(key, now);
      try {
        await sender.pass();
      } catch (error) {
        deps.logger?.error({ err: error, chainId: chain.chainId }, 'keeper pass failed; retried at the next');
      }
    }
  };
  const once = () => (running ??= passAll().catch((error) => deps.logger?.error({ err: error }, 'keeper pass failed')).finally(() => (running = undefined)));
  const timer = setInterval(() => {
    if (!stopped) void once();
  }, deps.settings.pollSeconds * 1_000);
  timer.unref();
  return {
    passAll: once,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await Promise.all([...senders.values()].map((sender) => sender?.release().catch(() => undefined)));
    },
  };
}
