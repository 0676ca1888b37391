import { getAddress, verifyMessage } from 'ethers';
import { SiweMessage } from 'siwe';
import { SignInInputError, SignInRejected } from './errors.ts';

/** What every SIWE message of this service must say (from config). */
export interface SiweSettings {
  domain: string;
  uri: string;
  chainId: number;
}

export const SIWE_STATEMENT = 'Sign in to the Cross-Chain Liquidity Relayer.';

/** How far a wallet's clock may run ahead of ours when it reports Issued At. */
const ISSUED_AT_SKEW_MS = 60_000;

/**
 * The EIP-4361 text the wallet signs: domain, checksummed address, statement, URI, Version 1,
 * Chain ID, Nonce, Issued At, Expiration Time. The exact text is stored; login must present it unchanged.
 */
export function buildSiweMessage(settings: SiweSettings, address: string, nonce: string, issuedAt: Date, expiresAt: Date): string {
  return new SiweMessage({
    domain: settings.domain,
    address: getAddress(address),
    statement: SIWE_STATEMENT,
    uri: settings.uri,
    version: '1',
    chainId: settings.chainId,
    nonce,
    issuedAt: issuedAt.toISOString(),
    expirationTime: expiresAt.toISOString(),
  }).prepareMessage();
}

/** Parses an EIP-4361 text; a text that is not one is bad input (422 on `message`), not a failed sign-in. */
export function parseSiweMessage(text: string): SiweMessage {
  try {
    return new SiweMessage(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SignInInputError('message', `is not an EIP-4361 (SIWE) message: ${reason}`);
  }
}

function time(value: string | undefined, field: string): number {
  const ms = value === undefined ? Number.NaN : Date.parse(value);
  if (Number.isNaN(ms)) throw new SignInRejected(`SIWE ${field} is missing or not a timestamp`);
  return ms;
}

/**
 * Checks what the message claims against this service and the clock: domain, URI, version,
 * chain id, issued-at (not in the future), expiration (still ahead) and not-before (reached).
 * The nonce and the exact text are checked against the stored challenge by the caller.
 * Throws `SignInRejected` naming the first failing field.
 */
export function checkSiweClaims(message: SiweMessage, settings: SiweSettings, now: Date): void {
  if (message.scheme !== undefined || message.domain !== settings.domain) {
    throw new SignInRejected(`SIWE domain must be '${settings.domain}', received '${message.scheme ? `${message.scheme}://` : ''}${message.domain}'`);
  }
  if (message.uri !== settings.uri) throw new SignInRejected(`SIWE URI must be '${settings.uri}', received '${message.uri}'`);
  if (message.version !== '1') throw new SignInRejected(`SIWE Version must be 1, received '${message.version}'`);
  if (message.chainId !== settings.chainId) {
    throw new SignInRejected(`SIWE Chain ID must be ${settings.chainId}, received ${message.chainId}`);
  }
  if (time(message.issuedAt, 'Issued At') > now.getTime() + ISSUED_AT_SKEW_MS) {
    throw new SignInRejected(`SIWE Issued At ${message.issuedAt} is in the future`);
  }
  if (time(message.expirationTime, 'Expiration Time') <= now.getTime()) {
    throw new SignInRejected(`SIWE message expired at ${message.expirationTime}`);
  }
  if (message.notBefore !== undefined && time(message.notBefore, 'Not Before') > now.getTime()) {
    throw new SignInRejected(`SIWE message is not valid before ${message.notBefore}`);
  }
}

/**
 * Checks that `signature` is a personal-message (EIP-191) signature of exactly `text` by the
 * message's address. A signature that cannot even be decoded is a failed sign-in, never a crash.
 */
export function checkSiweSignature(text: string, signature: string, address: string): void {
  let signer: string;
  try {
    signer = verifyMessage(text, signature);
  } catch {
    throw new SignInRejected('signature does not verify');
  }
  if (signer !== getAddress(address)) throw new SignInRejected('signature was not made by the address in the message');
}
