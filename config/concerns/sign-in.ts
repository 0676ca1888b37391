import { z } from 'zod';
import { defineConcern, intFromEnv, isLoopbackHost, isoTime } from './define.ts';

/** The settings whose host a wallet shows the user when signing in. */
const SIGN_IN_DOMAIN_KEYS = ['SIWE_DOMAIN', 'SIWE_URI', 'SEP10_HOME_DOMAIN', 'SEP10_WEB_AUTH_DOMAIN'] as const;

/** Sign-in (SIWE, SEP-10), tokens and sessions: the API's alone. */
export const signInSettings = defineConcern({
  name: 'sign-in',
  schema: z.object({
    /** HMAC key for JWTs (HS256), at least 32 bytes. Generated into DATA_DIR outside production. */
    JWT_SECRET: z.string().optional(),
    /**
     * JWT key rotation (docs/security.md "Rotating keys"): the key JWT_SECRET replaces. Tokens carry a `kid`
     * (a fingerprint of their key); before JWT_KEY_SWITCH_AT this key signs, from then on JWT_SECRET,
     * and tokens of this key stay valid for one token lifetime after the switch (access:
     * ACCESS_TOKEN_TTL_SECONDS, refresh: REFRESH_TOKEN_TTL_SECONDS), so the rotation logs nobody out.
     */
    JWT_PREVIOUS_SECRET: z.string().optional(),
    /** ISO 8601 time from which JWT_SECRET signs tokens; set with JWT_PREVIOUS_SECRET. */
    JWT_KEY_SWITCH_AT: isoTime.optional(),
    /** Lifetime of an access token, seconds. */
    ACCESS_TOKEN_TTL_SECONDS: intFromEnv(30, 86_400).default(900),
    /** Lifetime of a refresh token, seconds. */
    REFRESH_TOKEN_TTL_SECONDS: intFromEnv(60, 31_536_000).default(2_592_000),
    /** `iss` and `aud` claims of every JWT the service issues; tokens carrying others are refused. */
    JWT_ISSUER: z.string().min(1).default('cross-chain-relayer'),
    JWT_AUDIENCE: z.string().min(1).default('cross-chain-relayer-api'),
    /** Absolute lifetime of a session (one sign-in), seconds: refreshing never extends it past this. */
    SESSION_MAX_AGE_SECONDS: intFromEnv(60, 31_536_000).default(2_592_000),
    /** How often expired challenges, ended sessions and expired refresh tokens are deleted, seconds; 0: never. */
    AUTH_PURGE_INTERVAL_SECONDS: intFromEnv(0, 86_400).default(3_600),
    /** Lifetime of a sign-in challenge, seconds. */
    CHALLENGE_TTL_SECONDS: intFromEnv(10, 3_600).default(300),
    /**
     * SIWE domain (host[:port] of the dApp) and URI the messages name. Required in production; unset
     * outside it they follow the API's port: `localhost:<port>`, `http://localhost:<port>` (the port
     * bound, when PORT is 0). See `siweSettingsOf`.
     */
    SIWE_DOMAIN: z.string().min(1).optional(),
    SIWE_URI: z.string().url().optional(),
    /** Chain ID written into SIWE messages. Unset: 1 in production, the devnet's first chain (31337) outside it. */
    SIWE_CHAIN_ID: intFromEnv(1, Number.MAX_SAFE_INTEGER).optional(),
    /** Secret seed (S...) of the key that signs SEP-10 challenges. Generated into DATA_DIR outside production. */
    SEP10_SIGNING_SECRET: z.string().optional(),
    /**
     * SEP-10 home domain (where stellar.toml lives, host[:port]) and web-auth domain (the host of
     * WEB_AUTH_ENDPOINT). Required in production; unset outside it, both follow the host each request
     * reached the service on (auth/sep10.ts), so a wallet pointed at http://127.0.0.1:3000 signs in.
     */
    SEP10_HOME_DOMAIN: z.string().min(1).max(59, 'must be at most 59 characters (SEP-10 manage_data key)').optional(),
    SEP10_WEB_AUTH_DOMAIN: z.string().min(1).max(64).optional(),
    /**
     * Horizon of that network. Set: SEP-10 sign-in checks an existing account's signers and medium
     * threshold there (an account Horizon does not know signs with its master key). Unset: master key only.
     */
    STELLAR_HORIZON_URL: z.string().url().optional(),
    /**
     * Stellar network passphrase for SEP-10 challenges and stellar.toml. Unset: the network of the
     * registry's Stellar chain (the lowest chain id if several), else the public test network.
     */
    STELLAR_NETWORK_PASSPHRASE: z.string().min(1).optional(),
  }),
  check(config, ctx) {
    if ((config.JWT_PREVIOUS_SECRET !== undefined) !== (config.JWT_KEY_SWITCH_AT !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['JWT_KEY_SWITCH_AT'], message: 'set JWT_PREVIOUS_SECRET and JWT_KEY_SWITCH_AT together (JWT key rotation)' });
    }
    if (config.NODE_ENV !== 'production') return;
    // A production sign-in names the public site: a wallet shown "localhost" cannot tell a phishing page from the dApp.
    for (const key of SIGN_IN_DOMAIN_KEYS) {
      const value = config[key];
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be set in production: the public domain wallets show when signing in' });
      } else if (isLoopbackHost(value)) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must name the public domain in production, not localhost or a loopback address' });
      }
    }
  },
});
