import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { RelayerSigner } from '../chains/signers.ts';
import type { Notifications } from '../db/notifications.ts';
import { OPERATOR_SWITCHES_CHANNEL, switchEngaged } from '../db/repositories/operator.ts';
import { SigningStoppedError } from './errors.ts';

/**
 * How often each api process reads the switch even though no change was heard: the bound on a stop
 * whose notification was lost on a connection that died without the process seeing it (a half-open
 * TCP connection). A change the LISTEN connection hears, or one made while it was down and read
 * when it reconnects, reaches the process in about a second.
 */
export const SIGNING_SWITCH_SAFETY_READ_MS = 30_000;

/** The signing switch as this process last read it. */
export interface SigningSwitch {
  /** True while the operator has signing stopped (true until the first read: nothing is signed unread). */
  stopped(): boolean;
  /** Reads the switch (the process serves nothing before), then follows its changes. */
  start(): Promise<void>;
  close(): void;
}

/**
 * `operator_switches.signing_stopped`, read at start, again whenever a change is NOTIFYed
 * (`setSwitch` notifies as it commits) or the LISTEN connection (re)connects (a change made while it
 * was down was not heard), and every `safetyReadMs` whatever was heard. A read that fails (PostgreSQL
 * out) keeps the last answer: a stop holds through an outage, and a running service keeps running.
 * The LISTEN is on the process's shared connection (`notifications`): no connection of its own.
 */
export function createSigningSwitch(
  knex: Knex, logger: Logger, notifications: Notifications, safetyReadMs = SIGNING_SWITCH_SAFETY_READ_MS,
): SigningSwitch {
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let stopListening: (() => void) | undefined;
  let reading = false;
  let again = false;
  const read = async () => {
    const now = await switchEngaged(knex, 'signing_stopped');
    if (now !== stopped) {
      logger.warn({ stopped: now }, now ? 'signing is stopped by the operator: signed requests are refused (503 SIGNING_STOPPED)' : 'signing is on');
    }
    stopped = now;
  };
  // One read at a time; a change heard during a read is read again after it (the read under way may
  // have begun before the change committed).
  const reread = () => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    void (async () => {
      do {
        again = false;
        await read().catch((error: unknown) => logger.warn({ err: error }, 'signing switch: read failed, keeping the last answer'));
      } while (again && timer);
      reading = false;
    })();
  };
  return {
    stopped: () => stopped,
    async start() {
      if (timer) return;
      stopped = true;
      await read();
      timer = setInterval(reread, safetyReadMs);
      timer.unref();
      stopListening = notifications.listen(OPERATOR_SWITCHES_CHANNEL, { onNotification: reread, onConnected: reread });
    },
    close() {
      clearInterval(timer);
      timer = undefined;
      stopListening?.();
      stopListening = undefined;
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
