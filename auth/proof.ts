import type { Knex } from 'knex';
import { adapterOf } from '../chains/adapters.ts';
import type { ChainKind } from '../domain/index.ts';
import { consumeChallenge, findChallengeByNonce } from '../db/repositories/challenges.ts';
import { SignInInputError, SignInRejected } from './errors.ts';
import { checkSiweClaims, checkSiweSignature, parseSiweMessage, type SiweSettings } from './siwe.ts';
import { verifyStellarLogin, type Sep10Settings } from './sep10.ts';

/** A login (or link) body: what the wallet signed. */
export type WalletProof =
  | { chainKind: 'EVM'; message: string; signature: string }
  | { chainKind: 'STELLAR'; transaction: string };

/** A wallet whose ownership was just proven, in canonical spelling. */
export interface ProvenWallet {
  chainKind: ChainKind;
  address: string;
}

/** A proof whose signature holds, and the challenge it must consume. */
export type VerifiedProof = { chainKind: ChainKind; address: string; nonce: string; message: string | null };
type Expected = VerifiedProof;

/**
 * Verifies the signature of a proof (SIWE, or SEP-10 with a Horizon lookup of the account's
 * signers): outside any database transaction, since it may wait on the network. Throws the errors
 * of `./errors.ts`.
 */
export async function verifyWalletProof(
  settings: { siwe: SiweSettings; sep10: Sep10Settings },
  proof: WalletProof,
  now = new Date(),
): Promise<VerifiedProof> {
  // The chain kind's wallets speak one sign-in protocol; the body's fields were checked for it (api/schemas/auth.ts).
  if (adapterOf(proof.chainKind).signInProtocol === 'SIWE') {
    const { message: text, signature } = proof as { message: string; signature: string };
    const message = parseSiweMessage(text);
    checkSiweClaims(message, settings.siwe, now);
    checkSiweSignature(text, signature, message.address);
    return { chainKind: proof.chainKind, address: message.address, nonce: message.nonce, message: text };
  }
  const { account, nonce } = await verifyStellarLogin(settings.sep10, (proof as { transaction: string }).transaction);
  return { chainKind: proof.chainKind, address: account, nonce, message: null };
}

/**
 * Consumes the challenge of a verified proof inside `trx` (so a failure later in the caller's
 * transaction leaves it unused). Verifying first means a failed attempt does not burn the wallet's
 * challenge.
 */
export async function consumeProof(trx: Knex.Transaction, expected: VerifiedProof): Promise<ProvenWallet> {
  const consumed = await consumeChallenge(trx, expected);
  if (consumed) return { chainKind: consumed.chainKind, address: consumed.address };
  throw await whyNotConsumed(trx, expected);
}

/** The precise reason a challenge could not be consumed, looked up only after the atomic attempt failed. */
async function whyNotConsumed(trx: Knex.Transaction, expected: Expected): Promise<Error> {
  const found = await findChallengeByNonce(trx, expected.nonce);
  if (!found) return new SignInRejected('unknown challenge: request a new one from /v1/auth/challenge');
  const { challenge, now } = found;
  if (challenge.chainKind !== expected.chainKind) {
    return new SignInInputError('chainKind', `must match the challenge's chain kind ${challenge.chainKind}, received ${expected.chainKind}`);
  }
  if (challenge.usedAt) return new SignInRejected('challenge was already used: request a new one');
  if (challenge.expiresAt <= now) return new SignInRejected('challenge expired: request a new one');
  if (challenge.address !== expected.address) return new SignInRejected('challenge was issued to another address');
  return new SignInRejected('message is not exactly the one issued for this nonce');
}
