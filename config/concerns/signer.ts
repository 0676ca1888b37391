import { z } from 'zod';
import { booleanFromEnv, defineConcern, isoTime } from './define.ts';

/** The relayer's signing keys (in memory or in a PKCS#11 token): the API's alone, the only process that signs requests. */
export const signerSettings = defineConcern({
  name: 'relayer signer',
  schema: z.object({
    /** 0x-prefixed secp256k1 private key that signs EIP-712 requests. Generated into DATA_DIR outside production. */
    RELAYER_EVM_PRIVATE_KEY: z.string().optional(),
    /** Secret seed (S...) of the ed25519 key that signs Stellar requests. Generated into DATA_DIR outside production. */
    RELAYER_STELLAR_SECRET: z.string().optional(),
    /**
     * Relayer key rotation without downtime (docs/security.md "Rotating keys"): the keys being replaced. Before
     * RELAYER_KEY_SWITCH_AT the service signs with these (or, with RELAYER_SIGNER=pkcs11, the
     * PKCS11_*_PREVIOUS_KEY_LABEL keys), from then on with RELAYER_EVM_PRIVATE_KEY / RELAYER_STELLAR_SECRET
     * (the PKCS11_*_KEY_LABEL keys). A key with no previous one set did not change. The contracts must
     * already trust the new key (admin `rotateRelayer` / `rotate_relayer`) with a grace period covering
     * the switch plus SIGNED_REQUEST_TTL_SECONDS.
     */
    RELAYER_EVM_PREVIOUS_PRIVATE_KEY: z.string().optional(),
    RELAYER_STELLAR_PREVIOUS_SECRET: z.string().optional(),
    /** RELAYER_SIGNER=pkcs11 rotation: labels of the key pairs being replaced, in the same token. */
    PKCS11_EVM_PREVIOUS_KEY_LABEL: z.string().min(1).optional(),
    PKCS11_STELLAR_PREVIOUS_KEY_LABEL: z.string().min(1).optional(),
    /** ISO 8601 time from which the relayer signs with its current keys; required with any previous key. */
    RELAYER_KEY_SWITCH_AT: isoTime.optional(),
    /**
     * Where the relayer's signing keys live (docs/security.md "Relayer keys in an HSM"): `env` holds them in memory
     * from RELAYER_EVM_PRIVATE_KEY / RELAYER_STELLAR_SECRET (development; refused in production unless
     * RELAYER_SIGNER_ALLOW_ENV=true), `pkcs11` signs inside a PKCS#11 token (HSM) with the PKCS11_* settings.
     */
    RELAYER_SIGNER: z.enum(['env', 'pkcs11'], { error: 'must be env or pkcs11' }).default('env'),
    /** Production escape hatch: lets RELAYER_SIGNER=env start in production (staging, test stacks), knowingly. */
    RELAYER_SIGNER_ALLOW_ENV: booleanFromEnv('false'),
    /** RELAYER_SIGNER=pkcs11: path of the token's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
    PKCS11_MODULE: z.string().min(1).optional(),
    /** RELAYER_SIGNER=pkcs11: the label of the token holding the keys. */
    PKCS11_TOKEN_LABEL: z.string().min(1).optional(),
    /** RELAYER_SIGNER=pkcs11: the token's user PIN; or PKCS11_PIN_FILE, a file whose first line is the PIN. */
    PKCS11_PIN: z.string().min(1).optional(),
    PKCS11_PIN_FILE: z.string().min(1).optional(),
    /** RELAYER_SIGNER=pkcs11: label of the secp256k1 key pair (EVM requests). */
    PKCS11_EVM_KEY_LABEL: z.string().min(1).optional(),
    /** RELAYER_SIGNER=pkcs11: label of the Ed25519 key pair (Stellar requests). */
    PKCS11_STELLAR_KEY_LABEL: z.string().min(1).optional(),
  }),
  check(config, ctx) {
    const previousRelayerKeys = ([
      'RELAYER_EVM_PREVIOUS_PRIVATE_KEY',
      'RELAYER_STELLAR_PREVIOUS_SECRET',
      'PKCS11_EVM_PREVIOUS_KEY_LABEL',
      'PKCS11_STELLAR_PREVIOUS_KEY_LABEL',
    ] as const)
      .filter((key) => config[key] !== undefined);
    if ((previousRelayerKeys.length > 0) !== (config.RELAYER_KEY_SWITCH_AT !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['RELAYER_KEY_SWITCH_AT'], message: previousRelayerKeys.length > 0
        ? `must be set with ${previousRelayerKeys.join(', ')}: the moment the current keys take over`
        : 'is set but no previous relayer key is (RELAYER_EVM_PREVIOUS_PRIVATE_KEY, RELAYER_STELLAR_PREVIOUS_SECRET or PKCS11_*_PREVIOUS_KEY_LABEL)' });
    }
    if (config.RELAYER_SIGNER === 'pkcs11') {
      for (const key of ['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_EVM_KEY_LABEL', 'PKCS11_STELLAR_KEY_LABEL'] as const) {
        if (config[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'must be set when RELAYER_SIGNER=pkcs11' });
      }
      // The PIN is a secret of the signing process alone (config/secrets.ts resolveSecrets checks it per role).
    }
    // Raw keys in every pod's environment are the first thing an intruder takes: production signs in an HSM.
    if (config.NODE_ENV === 'production' && config.RELAYER_SIGNER === 'env' && !config.RELAYER_SIGNER_ALLOW_ENV) {
      ctx.addIssue({
        code: 'custom',
        path: ['RELAYER_SIGNER'],
        message: 'is env (raw keys in the environment): production wants RELAYER_SIGNER=pkcs11 (docs/security.md ' +
          '"Relayer keys in an HSM"), or RELAYER_SIGNER_ALLOW_ENV=true to accept the risk',
      });
    }
  },
});
