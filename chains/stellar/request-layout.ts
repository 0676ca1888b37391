import { createHash } from 'node:crypto';
import { StrKey } from '@stellar/stellar-sdk';
import { encodeStruct, parseUint, typeString, type FieldSpec } from '../request-schema.ts';
import type { DomainNameVersion } from '../evm/typed-data.ts';

/** Where a Stellar request is valid: the network, the registry's chain id and the contract. */
export interface StellarRequestDomain extends DomainNameVersion {
  /** Network passphrase; its SHA-256 is the network id a Soroban contract reads from the ledger. */
  networkPassphrase: string;
  /** The registry's chain id for this network (e.g. "148"). */
  chainId: bigint | string;
  /** The verifying contract (C... strkey). */
  contract: string;
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

/**
 * The bytes the relayer's Stellar key signs the hash of, every part exactly 32 bytes:
 *
 *   sha256(utf8(domain name)) ‖ sha256(utf8(domain version)) ‖ sha256(utf8(network passphrase))
 *   ‖ chainId (uint256 big-endian) ‖ contract id (32 raw bytes of the C... strkey)
 *   ‖ sha256(utf8(type string, e.g. "FundAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount)"))
 *   ‖ each field of the struct in order, as the same 32-byte word EIP-712 encodes
 *
 * so the message is 32 × (6 + number of fields) bytes and carries no length prefixes.
 */
export function stellarRequestMessage(
  domain: StellarRequestDomain,
  primaryType: string,
  fields: FieldSpec[],
  values: Record<string, unknown>,
): Buffer {
  if (!StrKey.isValidContract(domain.contract)) {
    throw new TypeError(`contract must be a Stellar contract strkey (C...), received '${domain.contract}'`);
  }
  const words = encodeStruct(fields, values).map((word) => Buffer.from(word.slice(2), 'hex'));
  return Buffer.concat([
    sha256(domain.name),
    sha256(domain.version),
    sha256(domain.networkPassphrase),
    Buffer.from(parseUint(typeof domain.chainId === 'bigint' ? domain.chainId : String(domain.chainId)).toString(16).padStart(64, '0'), 'hex'),
    Buffer.from(StrKey.decodeContract(domain.contract)),
    sha256(typeString(primaryType, fields)),
    ...words,
  ]);
}

/** The request hash a Stellar contract recomputes and verifies the ed25519 signature over: sha256 of the message. */
export function stellarRequestHash(
  domain: StellarRequestDomain,
  primaryType: string,
  fields: FieldSpec[],
  values: Record<string, unknown>,
): Buffer {
  return sha256(stellarRequestMessage(domain, primaryType, fields, values));
}
