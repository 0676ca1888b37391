import { FeeBumpTransaction, Keypair, Transaction, TransactionBuilder, WebAuth } from '@stellar/stellar-sdk';
import type { StellarAccountReader } from '../chains/stellar/horizon.ts';
import { SignInInputError, SignInRejected } from './errors.ts';

/** The server side of SEP-10 (from config and secrets). */
export interface Sep10Settings {
  serverKeypair: Keypair;
  homeDomain: string;
  webAuthDomain: string;
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

/** Builds and signs a SEP-10 challenge for `account` (a G-address) valid for `ttlSeconds`. */
export function buildStellarChallenge(settings: Sep10Settings, account: string, ttlSeconds: number): StellarChallenge {
  const transaction = WebAuth.buildChallengeTx(
    settings.serverKeypair, account, settings.homeDomain, ttlSeconds, settings.networkPassphrase, settings.webAuthDomain,
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
  let account: string;
  try {
    ({ clientAccountID: account } = WebAuth.readChallengeTx(
      transaction, server, settings.networkPassphrase, settings.homeDomain, settings.webAuthDomain,
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
        transaction, server, settings.networkPassphrase, threshold, signers, settings.homeDomain, settings.webAuthDomain,
      );
    } catch (error) {
      throw new SignInRejected(`transaction's signatures do not meet the medium threshold (${threshold}) of account ${account}: ${(error as Error).message}`);
    }
    return { account, nonce: challengeKey(decoded) };
  }
  try {
    WebAuth.verifyChallengeTxSigners(
      transaction, server, settings.networkPassphrase, [account], settings.homeDomain, settings.webAuthDomain,
    );
  } catch (error) {
    throw new SignInRejected(`transaction is not signed by the client account ${account}: ${(error as Error).message}`);
  }
  return { account, nonce: challengeKey(decoded) };
}
