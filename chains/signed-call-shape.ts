import type { ChainKind } from '../domain/chain-kind.ts';

/*
 * The shape of a signed response alone, in a module that imports nothing of chains/: the call
 * builders of each kind (and the adapter interface the keeper's calls go through) read it without
 * reaching the signing code, which itself reaches the adapters.
 */

/** The spec's shared "signed call data" shape. */
export interface SignedCallData {
  chainId: string;
  contractAddress: string;
  /** EVM: 65-byte r‖s‖v secp256k1 signature over `reqHash`. Stellar: 64-byte ed25519 signature over `reqHash`. 0x hex. */
  signature: string;
  /** Stellar only: the relayer's G... public key the contract verifies against. */
  signerPublicKey?: string;
  /** 32 random bytes, 0x hex; the contract accepts each once. */
  authToken: string;
  /** Seconds until `deadline`. */
  timeToExpire: number;
  /** EVM: the EIP-712 digest. Stellar: sha256 of the documented byte layout. 0x hex. */
  reqHash: string;
  chainKind: ChainKind;
  /** Unix seconds after which the contract rejects the request; an argument of every contract call. */
  deadline: string;
}

