import { FeeBumpTransaction, Keypair, Transaction, TransactionBuilder, WebAuth } from '@stellar/stellar-sdk';
import { SignInInputError, SignInRejected } from './errors.ts';

/** The server side of SEP-10 (from config and secrets). */
export interface Sep10Settings {
  serverKeypair: Keypair;
  homeDomain: string;
  webAuthDomain: string;
  networkPassphrase: string;
}

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
 * domain, passphrase, time bounds) then `verifyChallengeTxSigners` with the client account's own key,
 * so the client's signature is required and no unknown signature may ride along. Only the master key
 * of the account counts (no Horizon lookup of account signers). Returns the account and the challenge key.
 */
export function verifyStellarLogin(settings: Sep10Settings, transaction: string): { account: string; nonce: string } {
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
  try {
    WebAuth.verifyChallengeTxSigners(
      transaction, server, settings.networkPassphrase, [account], settings.homeDomain, settings.webAuthDomain,
    );
  } catch (error) {
    throw new SignInRejected(`transaction is not signed by the client account ${account}: ${(error as Error).message}`);
  }
  return { account, nonce: challengeKey(decoded) };
}
