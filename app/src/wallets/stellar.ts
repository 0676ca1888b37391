import { getNetworkDetails, isConnected, requestAccess, signAuthEntry, signMessage, signTransaction } from '@stellar/freighter-api';
import { UserError } from '../errors.ts';

/** Freighter's error (its `error` field) as thrown: a decline reads as "rejected". */
function failed(error: { message?: string; code?: number } | undefined, what: string): never {
  const message = error?.message ?? 'unknown error';
  if (error?.code === -4 || /declin|reject/i.test(message)) throw new UserError('You declined the request in Freighter: nothing was signed.');
  throw new UserError(`Freighter could not ${what}.`, message);
}

/**
 * The Stellar wallet, through the Freighter API (`@stellar/freighter-api`, which speaks to the
 * extension by window messages). Its network is checked against the chain's passphrase before any
 * signature: a wallet on another network is named.
 */
export class StellarWallet {
  /**
   * Another account in Freighter that pays the fees of this account's Soroban calls (a sponsor):
   * the transactions' source, whose envelope Freighter signs for it, while this account only signs
   * its authorisation entries (`signAuthEntry`). Unset: this account is the source and pays.
   */
  feePayer?: string;

  constructor(readonly address: string, readonly networkPassphrase: string) {}

  /** Asks Freighter for access and the account; `expectedPassphrase`: the Stellar chain's, from GET /v1/chains. */
  static async connect(expectedPassphrase: string | undefined): Promise<StellarWallet> {
    const connected = await isConnected();
    if (!connected.isConnected) throw new UserError('Freighter was not found: install the Freighter extension to use a Stellar account.');
    const access = await requestAccess();
    if (access.error || !access.address) failed(access.error, 'share your account');
    const network = await getNetworkDetails();
    if (network.error) failed(network.error, 'tell its network');
    if (expectedPassphrase && network.networkPassphrase !== expectedPassphrase) {
      throw new UserError(`Freighter is on the ${network.network || 'another'} network ("${network.networkPassphrase}"); this service's Stellar chain is "${expectedPassphrase}". Switch networks in Freighter.`);
    }
    return new StellarWallet(access.address, network.networkPassphrase);
  }

  /** Co-signs a transaction (a SEP-10 challenge, a contract call) with the account, or with `address` (the fee payer's); the signed XDR. */
  async signTransaction(xdr: string, address: string = this.address): Promise<string> {
    const signed = await signTransaction(xdr, { networkPassphrase: this.networkPassphrase, address });
    if (signed.error || !signed.signedTxXdr) failed(signed.error, 'sign the transaction');
    return signed.signedTxXdr;
  }

  /**
   * Freighter's `signAuthEntry`: the signature (base64) of an authorisation entry's preimage
   * (`HashIdPreimage` XDR, base64) by the account, for a Soroban call another account submits.
   * API v4+ answers base64; an older byte-array answer is turned into base64 too.
   */
  async signAuthEntry(preimageXdr: string): Promise<string> {
    const signed = await signAuthEntry(preimageXdr, { networkPassphrase: this.networkPassphrase, address: this.address });
    if (signed.error || !signed.signedAuthEntry) failed(signed.error, 'sign the authorisation');
    return base64Of(signed.signedAuthEntry);
  }

  /**
   * SEP-53 signature of `text` by the account (Freighter's `signMessage`: ed25519 over
   * SHA-256("Stellar Signed Message:\n" + text)), as base64, the form the API's Stellar signatures
   * take. Freighter's API v4+ answers base64; its v3 form (a Buffer, or its JSON `{ data: [...] }`) is
   * turned into base64 too.
   */
  async signMessage(text: string): Promise<string> {
    const signed = await signMessage(text, { networkPassphrase: this.networkPassphrase, address: this.address });
    if (signed.error || !signed.signedMessage) failed(signed.error, 'sign the message');
    return base64Of(signed.signedMessage);
  }
}

/** A Freighter signature as base64: API v4+ gives base64; v3 a Buffer, or its JSON `{ data: [...] }`. */
function base64Of(value: unknown): string {
  if (typeof value === 'string') return value;
  const bytes = Array.from((value as { data?: number[] }).data ?? (value as ArrayLike<number>));
  return btoa(String.fromCharCode(...bytes));
}
