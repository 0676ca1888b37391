import { z } from 'zod';
import { defineConcern, intFromEnv } from './define.ts';

/**
 * The keeper: the relayer's own accounts (one per chain kind) that send the transactions a trade is
 * owed when its parties do not, and how it sends them. Read by the sending process (worker, embedded);
 * the api never holds a keeper key.
 */
export const keeperSettings = defineConcern({
  name: 'keeper',
  schema: z.object({
    /**
     * Whether this process sends the keeper's transactions. Unset: on. In production the sending process
     * refuses to start without keeper keys unless this is `false`, set explicitly.
     */
    KEEPER_ENABLED: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
    /**
     * Where the keeper's keys live: `env` in memory from KEEPER_EVM_PRIVATE_KEY / KEEPER_STELLAR_SECRET
     * (generated into DATA_DIR outside production), `pkcs11` in the PKCS#11 token of the PKCS11_* settings
     * under the PKCS11_KEEPER_*_KEY_LABEL labels. Never the relayer's request-signing keys.
     */
    KEEPER_SIGNER: z.enum(['env', 'pkcs11'], { error: 'must be env or pkcs11' }).default('env'),
    /** KEEPER_SIGNER=env: 0x-prefixed secp256k1 private key of the keeper's EVM account (pays gas on every EVM chain). */
    KEEPER_EVM_PRIVATE_KEY: z.string().optional(),
    /** KEEPER_SIGNER=env: secret seed (S...) of the keeper's Stellar account. */
    KEEPER_STELLAR_SECRET: z.string().optional(),
    /** KEEPER_SIGNER=pkcs11: label of the keeper's secp256k1 key pair. */
    PKCS11_KEEPER_EVM_KEY_LABEL: z.string().min(1).optional(),
    /** KEEPER_SIGNER=pkcs11: label of the keeper's Ed25519 key pair. */
    PKCS11_KEEPER_STELLAR_KEY_LABEL: z.string().min(1).optional(),
    /**
     * KEEPER_SIGNER=pkcs11: the token holding the keeper's keys (PKCS11_MODULE's), when not PKCS11_TOKEN_LABEL's.
     * A token of its own keeps the request-signing keys out of the worker's reach altogether.
     */
    PKCS11_KEEPER_TOKEN_LABEL: z.string().min(1).optional(),
    /**
     * KEEPER_SIGNER=pkcs11: the keeper token's user PIN (or PKCS11_KEEPER_PIN_FILE, a file whose first line is it):
     * the worker's own secret, never PKCS11_PIN (the api's, which the worker refuses to hold).
     */
    PKCS11_KEEPER_PIN: z.string().min(1).optional(),
    PKCS11_KEEPER_PIN_FILE: z.string().min(1).optional(),
    /**
     * Seconds a sent transaction may stay unmined before it is replaced with a higher fee (EVM: same
     * nonce; Stellar: a fee bump around the same transaction).
     */
    KEEPER_REPLACE_AFTER_SECONDS: intFromEnv(1, 86_400).default(60),
    /** Highest EIP-1559 max fee per gas, in gwei, the keeper ever offers; a transaction at this cap is no longer replaced. */
    KEEPER_MAX_FEE_GWEI: intFromEnv(1, 1_000_000).default(500),
    /**
     * Highest whole fee, in stroops (inclusion fee plus Soroban resource fee), of one Stellar transaction
     * the keeper sends, fee bumps included; a call whose resource fee alone leaves no room is not sent,
     * and a transaction whose fee bump would pass it is no longer bumped. Default 1 XLM.
     */
    KEEPER_STELLAR_MAX_FEE_STROOPS: intFromEnv(100, 1_000_000_000_000).default(10_000_000),
    /** Seconds between two passes of each keeper account's sender over its outbox. */
    KEEPER_POLL_SECONDS: intFromEnv(1, 3_600).default(5),
    /** Seconds a sender's lease on an account lasts unless renewed: how long a vanished sender blocks another. */
    KEEPER_LEASE_SECONDS: intFromEnv(5, 3_600).default(30),
  }),
  check(config, ctx) {
    const enabled = config.KEEPER_ENABLED !== 'false';
    if (config.KEEPER_SIGNER === 'pkcs11') {
      for (const key of ['PKCS11_KEEPER_EVM_KEY_LABEL', 'PKCS11_KEEPER_STELLAR_KEY_LABEL'] as const) {
        if (enabled && config[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'must be set when KEEPER_SIGNER=pkcs11' });
      }
      if (enabled && config.NODE_ENV === 'production' && config.PKCS11_KEEPER_PIN === undefined && config.PKCS11_KEEPER_PIN_FILE === undefined) {
        ctx.addIssue({
          code: 'custom', path: ['PKCS11_KEEPER_PIN'],
          message: 'must be set (or PKCS11_KEEPER_PIN_FILE) in production when KEEPER_SIGNER=pkcs11: the keeper token\'s PIN is the sending process\'s own',
        });
      }
      return;
    }
    if (config.NODE_ENV !== 'production' || !enabled) return;
    for (const key of ['KEEPER_EVM_PRIVATE_KEY', 'KEEPER_STELLAR_SECRET'] as const) {
      if (config[key] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'is required in production for the process that sends the keeper\'s transactions ' +
            '(or KEEPER_SIGNER=pkcs11 with PKCS11_KEEPER_*_KEY_LABEL, or KEEPER_ENABLED=false to run without a keeper)',
        });
      }
    }
  },
});

/** Whether the keeper sends from this process's configuration (unset KEEPER_ENABLED means on). */
export function keeperEnabled(config: { KEEPER_ENABLED?: 'true' | 'false' }): boolean {
  return config.KEEPER_ENABLED !== 'false';
}
