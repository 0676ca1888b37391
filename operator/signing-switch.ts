import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { RelayerSigner } from '../chains/signers.ts';
import { switchEngaged } from '../db/repositories/operator.ts';
import { SigningStoppedError } from './errors.ts';

/** How often each api process reads the switch: a stop reaches every process within this (plus a query). */
export const SIGNING_SWITCH_POLL_MS = 1_000;

/** The signing switch as this process last read it. */
export interface SigningSwitch {
  /** True while the operator has signing stopped (true until the first read: nothing is signed unread). */
  stopped(): boolean;
  /** Reads the switch (the process serves nothing before), then keeps reading it every `pollMs`. */
  start(): Promise<void>;
  close(): void;
}

/**
 * `operator_switches.signing_stopped`, read at start and every `pollMs`. A read that fails (PostgreSQL
 * out) keeps the last answer: a stop holds through an outage, and a running service keeps running.
 * Polling rather than LISTEN: no connection of its own (the connection budget), and a bound on staleness
 * that holds whatever happened to a notification.
 */
export function createSigningSwitch(knex: Knex, logger: Logger, pollMs = SIGNING_SWITCH_POLL_MS): SigningSwitch {
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let reading = false;
  const read = async () => {
    const now = await switchEngaged(knex, 'signing_stopped');
    if (now !== stopped) {
      logger.warn({ stopped: now }, now ? 'signing is stopped by the operator: signed requests are refused (503 SIGNING_STOPPED)' : 'signing is on');
    }
    stopped = now;
  };
  return {
    stopped: () => stopped,
    async start() {
      if (timer) return;
      stopped = true;
      await read();
      timer = setInterval(() => {
        if (reading) return;
        reading = true;
        read().catch(() => {}).finally(() => { reading = false; });
      }, pollMs);
      timer.unref();
    },
    close() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * `signer` refusing every signature while `stopped()` (SigningStoppedError, 503 SIGNING_STOPPED): the
 * one place every signed response passes, so none leaves whatever route asked. Public keys still answer.
 */
export function stoppableSigner(signer: RelayerSigner, stopped: () => boolean): RelayerSigner {
  const guard = <A extends unknown[], R>(sign: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    if (stopped()) throw new SigningStoppedError();
    return sign(...args);
  };
  const wrapped: RelayerSigner = {
    backend: signer.backend,
    evmAddress: () => signer.evmAddress(),
    stellarPublicKey: () => signer.stellarPublicKey(),
    signEvmDigest: guard((digest: string) => signer.signEvmDigest(digest)),
    signStellar: guard((hash: Buffer) => signer.signStellar(hash)),
    close: () => signer.close(),
  };
  if (signer.at) wrapped.at = (nowMs) => stoppableSigner(signer.at!(nowMs), stopped);
  return wrapped;
}
