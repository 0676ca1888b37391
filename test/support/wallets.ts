import { Keypair, Transaction } from '@stellar/stellar-sdk';
import { Web3 } from 'web3';
import type { TestService } from './service.ts';

/** Real keys for sign-in tests: web3 accounts for EVM, stellar-sdk keypairs for Stellar. */

const web3 = new Web3();

export type EvmAccount = ReturnType<typeof web3.eth.accounts.create>;

export const newEvmAccount = (): EvmAccount => web3.eth.accounts.create();
export const newStellarKeypair = (): Keypair => Keypair.random();

/** EIP-191 personal-message signature, as a wallet's `personal_sign` makes it. */
export function signPersonal(account: EvmAccount, message: string): string {
  return account.sign(message).signature;
}

/** Adds the client's signature to a SEP-10 challenge, as a Stellar wallet does. */
export function coSign(transaction: string, networkPassphrase: string, ...signers: Keypair[]): string {
  const tx = new Transaction(transaction, networkPassphrase);
  for (const signer of signers) tx.sign(signer);
  return tx.toEnvelope().toXDR('base64');
}

export interface JsonResponse {
  status: number;
  body: any;
}

/** A body already written as JSON text, sent as it is (for bodies JSON.stringify cannot write, e.g. nested 10,000 deep). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON request against the service, with an optional Bearer token. */
export async function call(service: TestService, method: string, path: string, body?: unknown, token?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const text = body === undefined ? undefined : body instanceof RawJson ? body.text : JSON.stringify(body);
  const response = await service.request(path, { method, headers, body: text });
  return { status: response.status, body: await response.json() };
}

/** Challenge, sign, login for an EVM account; returns the login response. */
export async function loginEvm(service: TestService, account: EvmAccount): Promise<JsonResponse> {
  const challenge = await call(service, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
  const { message } = challenge.body;
  return call(service, 'POST', '/v1/auth/login', { chainKind: 'EVM', message, signature: signPersonal(account, message) });
}

/** Challenge, co-sign, then login (or another endpoint taking a login body) for a Stellar keypair. */
export async function stellarProof(service: TestService, keypair: Keypair): Promise<{ chainKind: 'STELLAR'; transaction: string }> {
  const challenge = await call(service, 'POST', '/v1/auth/challenge', { address: keypair.publicKey(), chainKind: 'STELLAR' });
  return { chainKind: 'STELLAR', transaction: coSign(challenge.body.transaction, challenge.body.networkPassphrase, keypair) };
}

/** Same for an EVM account. */
export async function evmProof(service: TestService, account: EvmAccount): Promise<{ chainKind: 'EVM'; message: string; signature: string }> {
  const challenge = await call(service, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
  const { message } = challenge.body;
  return { chainKind: 'EVM', message, signature: signPersonal(account, message) };
}

export async function loginStellar(service: TestService, keypair: Keypair): Promise<JsonResponse> {
  return call(service, 'POST', '/v1/auth/login', await stellarProof(service, keypair));
}
