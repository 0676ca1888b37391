import type { Knex } from 'knex';
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

type Expected = { chainKind: ChainKind; address: string; nonce: string; message: string | null };

/**
 * Verifies the signature against its challenge and consumes the challenge, inside `trx` (so a
 * failure later in the caller's transaction leaves the challenge unused). The signature is
 * checked first, so a failed attempt does not burn the wallet's challenge.
 */
export async function proveWallet(
  trx: Knex.Transaction,
  settings: { siwe: SiweSettings; sep10: Sep10Settings },
  proof: WalletProof,
  now = new Date(),
): Promise<ProvenWallet> {
  let expected: Expected;
  if (proof.chainKind === 'EVM') {
    const message = parseSiweMessage(proof.message);
    checkSiweClaims(message, settings.siwe, now);
    checkSiweSignature(proof.message, proof.signature, message.address);
    expected = { chainKind: 'EVM', address: message.address, nonce: message.nonce, message: proof.message };
  } else {
    const { account, nonce } = verifyStellarLogin(settings.sep10, proof.transaction);
    expected = { chainKind: 'STELLAR', address: account, nonce, message: null };
  }

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
