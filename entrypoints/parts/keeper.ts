import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/config.ts';
import type { ProcessRole } from '../../config/roles.ts';
import { keeperSignerFromConfig } from '../../keeper/keys.ts';
import { keeperMetrics } from '../../keeper/metrics.ts';
import { startKeeperRunner, type KeeperChain, type KeeperRunner } from '../../keeper/runner.ts';

/** The keeper's part of a sending process: started after the process's other work, stopped before it. */
export interface KeeperPart {
  start(): void;
  stop(): Promise<void>;
}

/**
 * The keeper's senders of a process of `role` over the registry's chains, reporting the
 * `relayer_keeper_*` metrics on `registry`; a part that does nothing when this process sends nothing
 * (the api, KEEPER_ENABLED=false).
 */
export function keeperPart(
  config: Config,
  role: ProcessRole,
  deps: {
    knex: Knex; logger: Logger; registry: Registry; chains: () => Promise<KeeperChain[]>;
    /** The trades use case's keeper steps: `prepare` only where this process signs requests and drives the trades itself. */
    duties: { prepare?: () => Promise<unknown>; report: () => Promise<unknown> };
  },
): KeeperPart {
  const signer = keeperSignerFromConfig(config, role);
  if (!signer) return { start() {}, async stop() {} };
  const metrics = keeperMetrics(deps.registry);
  let runner: KeeperRunner | undefined;
  return {
    start() {
      runner ??= startKeeperRunner({
        knex: deps.knex, chains: deps.chains, signer, metrics, logger: deps.logger, ...deps.duties,
        settings: {
          replaceAfterSeconds: config.KEEPER_REPLACE_AFTER_SECONDS, maxFeeGwei: config.KEEPER_MAX_FEE_GWEI,
          stellarMaxFeeStroops: config.KEEPER_STELLAR_MAX_FEE_STROOPS,
          leaseSeconds: config.KEEPER_LEASE_SECONDS, pollSeconds: config.KEEPER_POLL_SECONDS,
        },
      });
      void signer.evmAddress().then((evmAddress) => deps.logger.info({ evmAddress, backend: signer.backend }, 'keeper sender started'), () => undefined);
    },
    async stop() {
      await runner?.stop();
      await signer.close();
    },
  };
}

/** The interval that judges what the keeper owes and signs its calls, in the api when another process sends. */
export interface KeeperDutiesLoop {
  stop(): Promise<void>;
}

/**
 * Runs `prepare` every KEEPER_POLL_SECONDS, one pass at a time, unless KEEPER_ENABLED=false (no
 * keeper sends anything, so nothing is signed for it). Several api processes may run it: each row
 * moves only from the status it was read in.
 */
export function startKeeperDuties(config: Config, logger: Logger, prepare: () => Promise<unknown>): KeeperDutiesLoop {
  if (config.KEEPER_ENABLED === 'false') return { async stop() {} };
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    running ??= prepare()
      .catch((error) => logger.error({ err: error }, 'keeper preparation failed; retried at the next pass'))
      .finally(() => (running = undefined));
  }, config.KEEPER_POLL_SECONDS * 1_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
