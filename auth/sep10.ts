import { FeeBumpTransaction, Keypair, Transaction, TransactionBuilder, WebAuth } from '@stellar/stellar-sdk';
import type { StellarAccountReader } from '../chains/stellar/horizon.ts';
import { SignInInputError, SignInRejected } from './errors.ts';

/** The server side of SEP-10 (from config and secrets). */
export interface Sep10Settings {
  serverKeypair: Keypair;
  /** Fixed home and web-auth domains (production); undefined: each follows the host a request reached (development). */
  homeDomain: string | undefined;
  webAuthDomain: string | undefined;
  networkPassphrase: string;
  /** Reads an account's signers and thresholds from Horizon (STELLAR_HORIZON_URL); unset: master key only. */
  accounts?: StellarAccountReader;
}

/** Only ed25519 keys can sign a challenge; a weight of 0 is no signer (a disabled master key). */
const ED25519_SIGNER = 'ed25519_public_key';

/** A challenge as issued: the server-signed XDR, the key the service stores it under, and when it lapses. */
export interface StellarChallenge {
  transaction: string;
  nonce: string;
  expiresAt: Date;
}

/** The key a challenge is stored under: the transaction hash, which client signatures do not change. */
function challengeKey(tx: Transaction): string {
  return tx.hash().toString('hex');
}

/** A request's Host header as a SEP-10 domain may carry it: host[:port], at most 59 characters. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The home and web-auth domains a challenge names: the configured ones, or (development, unset)
 * the host the request reached (`reachedHost`, its Host header): home domain host[:port], as a wallet
 * resolves stellar.toml from it; web-auth domain the bare hostname, as wallets compare it with
 * WEB_AUTH_ENDPOINT's hostname. A missing or odd Host falls back to localhost.
 */
export function sep10Domains(
  settings: Pick<Sep10Settings, 'homeDomain' | 'webAuthDomain'>,
  reachedHost?: string,
): { homeDomain: string; webAuthDomain: string } {
  const host = reachedHost !== undefined && reachedHost.length <= 59 && HOST.test(reachedHost) ? reachedHost.toLowerCase() : 'localhost';
  return {
    homeDomain: settings.homeDomain ?? host,
    webAuthDomain: settings.webAuthDomain ?? new URL(`http://${host}`).hostname,
  };
}

/** Builds and signs a SEP-10 challenge for `account` (a G-address) valid for `ttlSeconds`; `reachedHost` as in `sep10Domains`. */
export function buildStellarChallenge(settings: Sep10Settings, account: string, ttlSeconds: number, reachedHost?: string): StellarChallenge {
  const { homeDomain, webAuthDomain } = sep10Domains(settings, reachedHost);
  const transaction = WebAuth.buildChallengeTx(
    settings.serverKeypair, account, homeDomain, ttlSeconds, settings.networkPassphrase, webAuthDomain,
  );
  const tx = new Transaction(transaction, settings.networkPassphrase);
  return { transaction, nonce: challengeKey(tx), expiresAt: new Date(Number(tx.timeBounds!.maxTime) * 1000) };
}

/**
 * Verifies a co-signed challenge: `readChallengeTx` (server account, signature, home domain, web auth
 * domain, passphrase, time bounds), then who signed, as SEP-10 says:
 * - with a Horizon (`settings.accounts`) where the account exists: `verifyChallengeTxThreshold` over
 *   the account's ed25519 signers of non-zero weight, against its medium threshold (at least 1), so a
 *   multisig account signs in only with enough weight, and a disabled master key counts for nothing;
 * - where it does not exist (404), or without a Horizon: `verifyChallengeTxSigners` with the account's
 *   own key (master key).
 * In both cases no unknown signature may ride along. Horizon failing is `HorizonUnavailableError`
 * (503): the signers are never guessed. Returns the account and the challenge key.
 */
export async function verifyStellarLogin(settings: Sep10Settings, transaction: string): Promise<{ account: string; nonce: string }> {
  let decoded: Transaction | FeeBumpTransaction;
  try {
    decoded = TransactionBuilder.fromXDR(transaction, settings.networkPassphrase);
  } catch {
    throw new SignInInputError('transaction', 'is not a Stellar transaction envelope (base64 XDR)');
  }
  if (decoded instanceof FeeBumpTransaction) throw new SignInRejected('transaction must be the challenge transaction, not a fee bump');
  const server = settings.serverKeypair.publicKey();
  // Domains that follow the request's host were written into the challenge by this service, under
  // its signature, which readChallengeTx checks: read them back from the transaction.
  const { homeDomain, webAuthDomain } = { ...namedDomains(decoded), ...definedDomains(settings) };
  let account: string;
  try {
    ({ clientAccountID: account } = WebAuth.readChallengeTx(
      transaction, server, settings.networkPassphrase, homeDomain, webAuthDomain,
    ));
  } catch (error) {
    throw new SignInRejected(`transaction is not a valid challenge of this service: ${(error as Error).message}`);
  }
  if (!account.startsWith('G')) throw new SignInRejected('transaction must name a G-address account');
  const onNetwork = settings.accounts ? await settings.accounts(account) : null;
  if (onNetwork) {
    const signers = onNetwork.signers.filter((signer) => signer.type === ED25519_SIGNER && signer.weight > 0);
    const threshold = Math.max(onNetwork.thresholds.medium, 1);
    try {
      WebAuth.verifyChallengeTxThreshold(
        transaction, server, settings.networkPassphrase, threshold, signers, homeDomain, webAuthDomain,
      );
    } catch (error) {
      throw new SignInRejected(`transaction's signatures do not meet the medium threshold (${threshold}) of account ${account}: ${(error as Error).message}`);
    }
    return { account, nonce: challengeKey(decoded) };
  }
  try {
    WebAuth.verifyChallengeTxSigners(
      transaction, server, settings.networkPassphrase, [account], homeDomain, webAuthDomain,
    );
  } catch (error) {
    throw new SignInRejected(`transaction is not signed by the client account ${account}: ${(error as Error).message}`);
  }
  return { account, nonce: challengeKey(decoded) };
}

/** The configured domains only (undefined ones left out, so they do not override those read from a challenge). */
function definedDomains(settings: Sep10Settings): { homeDomain?: string; webAuthDomain?: string } {
  return {
    ...(settings.homeDomain !== undefined ? { homeDomain: settings.homeDomain } : {}),
    ...(settings.webAuthDomain !== undefined ? { webAuthDomain: settings.webAuthDomain } : {}),
  };
}

/** The home domain ("<domain> auth", the first operation) and web_auth_domain a challenge names; '' where absent. */
function namedDomains(tx: Transaction): { homeDomain: string; webAuthDomain: string } {
  const [first, ...rest] = tx.operations;
  const homeDomain = first?.type === 'manageData' && first.name.endsWith(' auth') ? first.name.slice(0, -' auth'.length) : '';
  const web = rest.find((op) => op.type === 'manageData' && op.name === 'web_auth_domain');
  const webAuthDomain = web?.type === 'manageData' && web.value ? web.value.toString('utf8') : '';
  return { homeDomain, webAuthDomain };
}
