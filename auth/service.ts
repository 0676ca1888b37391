import { randomBytes } from 'node:crypto';
import { Keypair } from '@stellar/stellar-sdk';
import type { Knex } from 'knex';
import { adapterOf } from '../chains/adapters.ts';
import { type ChainKind } from '../domain/index.ts';
import type { StellarAccountReader } from '../chains/stellar/horizon.ts';
import { siweSettingsOf, type Config } from '../config/config.ts';
import { insertChallenge } from '../db/repositories/challenges.ts';
import { stellarNetworkPassphrases } from '../db/repositories/chains.ts';
import {
  createSession, findLiveSessionPrincipal, insertRefreshToken, revokeSession, rotateRefreshToken, type RefreshTokenState,
} from '../db/repositories/sessions.ts';
import {
  addWallet, findOrCreateUserByWallet, findUserById, findUserIdByAddress, WalletUniquenessError, type UserRecord,
} from '../db/repositories/users.ts';
import type { Secrets } from '../config/secrets.ts';
import { SignInRejected, WalletConflict } from './errors.ts';
import { consumeProof, verifyWalletProof, type WalletProof } from './proof.ts';
import { buildStellarChallenge, sep10Domains, type Sep10Settings } from './sep10.ts';
import type { SessionCache } from './session-cache.ts';
import { buildSiweMessage, type SiweSettings } from './siwe.ts';
import { hashRefreshToken, issueAccessToken, issueRefreshToken, verifyToken, type TokenSettings, type TokenSubject } from './tokens.ts';

/** The network SEP-10 names when neither STELLAR_NETWORK_PASSPHRASE nor the registry gives one. */
export const DEFAULT_STELLAR_NETWORK_PASSPHRASE = 'Test SDF Network ; September 2015';

export interface AuthDeps {
  config: Config;
  secrets: Secrets;
  knex: Knex;
  /** Horizon's account records (STELLAR_HORIZON_URL): SEP-10 then checks signers and thresholds. */
  stellarAccounts?: StellarAccountReader;
  /** What SIWE messages name, read at each use; default `siweSettingsOf(config, config.PORT)`. */
  siwe?: () => SiweSettings;
  /**
   * This process's cache of live sessions (auth/session-cache.ts): an access token's session is then
   * read from the database only when the cache does not hold it. Without one, every request reads it.
   */
  sessionCache?: SessionCache;
}

import type { Principal } from '../domain/principal.ts';
export type { Principal };

export type Challenge =
  | { chainKind: 'EVM'; address: string; nonce: string; domain: string; uri: string; message: string; expiresAt: Date }
  | { chainKind: 'STELLAR'; address: string; transaction: string; networkPassphrase: string; expiresAt: Date };

export interface TokenPair {
  access: string;
  refresh: string;
}

const REFRESH_FAILURES: Record<RefreshTokenState, string> = {
  unknown: 'refresh token is not known',
  revoked: 'refresh token belongs to a revoked session: sign in again',
  reused: 'refresh token was already used: the whole session is revoked, sign in again',
  expired: 'refresh token expired: sign in again',
  session_ended: 'session reached its maximum age: sign in again',
};

/** `value`, or an error naming `name` when this process's role holds no such secret (config/secrets.ts SECRETS_OF_ROLE). */
function heldSecret(value: string | undefined, name: string): string {
  if (value === undefined) throw new Error(`${name} is not held by this process: only the api (and embedded) process signs and verifies tokens`);
  return value;
}

/** The token settings of a deployment (shared with the `requireAuth` middleware). */
export function tokenSettings(config: Config, secrets: Secrets): TokenSettings {
  return {
    secret: heldSecret(secrets.jwtSecret, 'JWT_SECRET'),
    ...(config.JWT_KEY_SWITCH_AT !== undefined
      ? { previous: { secret: heldSecret(secrets.jwtPreviousSecret, 'JWT_PREVIOUS_SECRET'), switchAt: config.JWT_KEY_SWITCH_AT } }
      : {}),
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    accessTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
  };
}

/**
 * Wallet sign-in use cases: challenges, login, link, refresh with rotation and reuse detection,
 * and the principal behind an access token. Throws the errors of `./errors.ts`.
 */
export function createAuthService(deps: AuthDeps) {
  const { config, knex } = deps;
  const tokens = tokenSettings(config, deps.secrets);
  // Read on every use: outside production they follow the port the API bound, known only after it listened.
  const siweNow = (): SiweSettings => deps.siwe?.() ?? siweSettingsOf(config, config.PORT);
  let serverKeypair: Keypair | undefined;
  // Decoded on first use: the secret was validated at start-up (resolveSecrets), and an app built
  // for something else (a health check without secrets) must not fail here.
  const sep10Base: Omit<Sep10Settings, 'networkPassphrase'> = {
    get serverKeypair() {
      return (serverKeypair ??= Keypair.fromSecret(heldSecret(deps.secrets.sep10SigningSecret, 'SEP10_SIGNING_SECRET')));
    },
    homeDomain: config.SEP10_HOME_DOMAIN,
    webAuthDomain: config.SEP10_WEB_AUTH_DOMAIN,
    accounts: deps.stellarAccounts,
  };
  /**
   * The SEP-10 settings now: the network is STELLAR_NETWORK_PASSPHRASE if set, else the registry's
   * Stellar chain's (read each time: the registry may be imported after start-up), so a challenge
   * names the network the contracts live on; no Stellar chain: the public test network.
   */
  async function sep10Now(): Promise<Sep10Settings> {
    const networkPassphrase = config.STELLAR_NETWORK_PASSPHRASE
      ?? (await stellarNetworkPassphrases(knex))[0] ?? DEFAULT_STELLAR_NETWORK_PASSPHRASE;
    return Object.defineProperties({ networkPassphrase }, Object.getOwnPropertyDescriptors(sep10Base)) as Sep10Settings;
  }

  /** Opens a session of `who.userId`; its tokens name `who.account` (the wallet that signed in) as `sub`. */
  async function openSession(trx: Knex.Transaction, who: TokenSubject): Promise<TokenPair> {
    const { userId } = who;
    // Whole seconds, as JWT `exp` counts them: a session's tokens can then live exactly up to its end.
    const now = new Date();
    const end = new Date((Math.floor(now.getTime() / 1000) + config.SESSION_MAX_AGE_SECONDS) * 1000);
    const sessionId = await createSession(trx, userId, end);
    const refresh = issueRefreshToken(tokens, who, sessionId, end, now);
    await insertRefreshToken(trx, { id: refresh.id, sessionId, tokenHash: refresh.hash, expiresAt: refresh.expiresAt });
    return { access: issueAccessToken(tokens, who, sessionId, end, now), refresh: refresh.token };
  }

  async function userOrFail(userId: string): Promise<UserRecord> {
    const user = await findUserById(knex, userId);
    if (!user) throw new SignInRejected('user no longer exists');
    return user;
  }

  return {
    /**
     * Issues a single-use challenge for a wallet (address already validated for its kind).
     * `reachedHost` (the request's Host) names the SEP-10 domains where they follow it (`sep10Domains`).
     */
    async issueChallenge(input: { chainKind: ChainKind; address: string }, reachedHost?: string): Promise<Challenge> {
      const address = adapterOf(input.chainKind).canonicalAddress(input.address);
      if (adapterOf(input.chainKind).signInProtocol === 'SIWE') {
        const issuedAt = new Date();
        const expiresAt = new Date(issuedAt.getTime() + config.CHALLENGE_TTL_SECONDS * 1000);
        const nonce = randomBytes(16).toString('hex');
        const siwe = siweNow();
        const message = buildSiweMessage(siwe, address, nonce, issuedAt, expiresAt);
        await insertChallenge(knex, { chainKind: input.chainKind, address, nonce, message, expiresAt });
        return { chainKind: input.chainKind as 'EVM', address, nonce, domain: siwe.domain, uri: siwe.uri, message, expiresAt };
      }
      const sep10 = await sep10Now();
      const challenge = buildStellarChallenge(sep10, address, config.CHALLENGE_TTL_SECONDS, reachedHost);
      await insertChallenge(knex, {
        chainKind: input.chainKind, address, nonce: challenge.nonce, message: challenge.transaction, expiresAt: challenge.expiresAt,
      });
      return {
        chainKind: input.chainKind as 'STELLAR', address, transaction: challenge.transaction,
        networkPassphrase: sep10.networkPassphrase, expiresAt: challenge.expiresAt,
      };
    },

    /** Verifies the signed challenge, creates the user on a wallet's first login, opens a session. */
    async login(proof: WalletProof): Promise<{ user: UserRecord; tokens: TokenPair }> {
      const verified = await verifyWalletProof({ siwe: siweNow(), sep10: await sep10Now() }, proof);
      const { userId, pair } = await knex.transaction(async (trx) => {
        const wallet = await consumeProof(trx, verified);
        const userId = await findOrCreateUserByWallet(trx, wallet.chainKind, wallet.address);
        return { userId, pair: await openSession(trx, { userId, account: wallet.address }) };
      });
      return { user: await userOrFail(userId), tokens: pair };
    },

    /** Records a proven wallet of another chain kind on the caller's user; existing tokens now cover it. */
    async link(principal: Principal, proof: WalletProof): Promise<UserRecord> {
      const verified = await verifyWalletProof({ siwe: siweNow(), sep10: await sep10Now() }, proof);
      await knex.transaction(async (trx) => {
        const wallet = await consumeProof(trx, verified);
        const current = await findUserById(trx, principal.userId);
        if (!current) throw new SignInRejected('user no longer exists');
        if (current.wallets.some((w) => w.chainKind === wallet.chainKind)) {
          throw new WalletConflict(`a ${wallet.chainKind} wallet is already linked to this user`);
        }
        const owner = await findUserIdByAddress(trx, wallet.address);
        if (owner) throw new WalletConflict(`${wallet.address} already belongs to another user`);
        try {
          await addWallet(trx, principal.userId, wallet.chainKind, wallet.address);
        } catch (error) {
          // A concurrent link or login got there first.
          if (error instanceof WalletUniquenessError) {
            throw new WalletConflict(error.rule === 'address'
              ? `${wallet.address} already belongs to another user`
              : `a ${wallet.chainKind} wallet is already linked to this user`);
          }
          throw error;
        }
      });
      // The wallet's insert NOTIFYs every session of the user; the caller's next request here sees it without waiting.
      deps.sessionCache?.forget(principal.sessionId);
      return userOrFail(principal.userId);
    },

    /**
     * Exchanges a refresh token for a new pair. The presented token is spent; presenting a spent
     * one again means it leaked: the whole session (every token of the family) is revoked. The new
     * tokens expire no later than the session's absolute end (SESSION_MAX_AGE_SECONDS after sign-in).
     */
    async refresh(token: string): Promise<TokenPair> {
      const claims = verifyToken(tokens, token, 'refresh');
      const outcome = await knex.transaction(async (trx) => {
        const rotated = await rotateRefreshToken(trx, claims.tokenId, hashRefreshToken(token));
        if (!rotated.ok) {
          if (rotated.state === 'reused' && rotated.sessionId) {
            await revokeSession(trx, rotated.sessionId, 'refresh token reuse');
            return { ok: false as const, state: rotated.state, revoked: rotated.sessionId };
          }
          return { ok: false as const, state: rotated.state };
        }
        const end = rotated.sessionExpiresAt;
        // The new pair names the same account as the spent token (a token of before `uid`: the user id).
        const who = { userId: rotated.userId, account: claims.account };
        const refresh = issueRefreshToken(tokens, who, rotated.sessionId, end);
        await insertRefreshToken(trx, { id: refresh.id, sessionId: rotated.sessionId, tokenHash: refresh.hash, expiresAt: refresh.expiresAt });
        return { ok: true as const, pair: { access: issueAccessToken(tokens, who, rotated.sessionId, end), refresh: refresh.token } };
      });
      // Thrown after commit, so a reuse revocation is kept; this process stops serving it at once (the
      // others when they hear the revocation's notice).
      if (!outcome.ok) {
        if ('revoked' in outcome && outcome.revoked) deps.sessionCache?.forget(outcome.revoked);
        throw new SignInRejected(REFRESH_FAILURES[outcome.state]);
      }
      return outcome.pair;
    },

    /** Ends the caller's session: its access and refresh tokens stop working at once. */
    async logout(principal: Principal): Promise<void> {
      await revokeSession(knex, principal.sessionId, 'logout');
      // Every process drops it when it hears the revocation's notice; this one without waiting for it.
      deps.sessionCache?.forget(principal.sessionId);
    },

    /**
     * The principal behind an access token: verified by `verifyToken` (the one JWT path, the same
     * that checks refresh tokens: HS256 only, issuer, audience, expiry, `typ: access`), then its
     * session must be live (as the process's session cache holds it, else as the database says);
     * with the token's expiry. Throws `SignInRejected` saying why not.
     */
    async authenticate(accessToken: string): Promise<{ principal: Principal; expiresAt: Date }> {
      const claims = verifyToken(tokens, accessToken, 'access');
      const cache = deps.sessionCache;
      const cached = cache?.get(claims.sessionId, claims.userId);
      if (cached) return { principal: cached, expiresAt: claims.expiresAt };
      const ticket = cache?.begin();
      const live = await findLiveSessionPrincipal(knex, claims.sessionId, claims.userId);
      if (!live) throw new SignInRejected('session was revoked or reached its maximum age: sign in again');
      if (cache && ticket !== undefined) cache.put(ticket, live.principal, live.endsAt);
      return { principal: live.principal, expiresAt: claims.expiresAt };
    },

    /** The caller's user with its wallets. */
    currentUser: userOrFail,

    /** What stellar.toml publishes for SEP-10, for a request that reached `reachedHost`. */
    async sep10Server(reachedHost?: string): Promise<{ signingKey: string; networkPassphrase: string; homeDomain: string; webAuthDomain: string }> {
      const sep10 = await sep10Now();
      return { signingKey: sep10.serverKeypair.publicKey(), networkPassphrase: sep10.networkPassphrase, ...sep10Domains(sep10, reachedHost) };
    },

    /** The token settings (issuing tests mint tokens with them). */
    tokens,
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
