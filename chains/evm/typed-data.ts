import { TypedDataEncoder, type TypedDataDomain, type TypedDataField } from 'ethers';
import { encodeStruct, solidityTypeOf, type FieldSpec } from '../request-schema.ts';

/** Name and version of the EIP-712 domain (config EIP712_DOMAIN_NAME / EIP712_DOMAIN_VERSION). */
export interface DomainNameVersion {
  name: string;
  version: string;
}

/** The full domain of a request: it binds the signature to one chain and one contract. */
export interface RequestDomain extends DomainNameVersion {
  chainId: bigint | string | number;
  /** The contract that verifies the request (an EVM address). */
  verifyingContract: string;
}

/** The EIP-712 `types` object for one struct made of 32-byte fields. */
export function typedDataTypes(primaryType: string, fields: FieldSpec[]): Record<string, TypedDataField[]> {
  return { [primaryType]: fields.map((field) => ({ name: field.name, type: solidityTypeOf(field.kind) })) };
}

/** Encoded words turned into the values ethers expects for bytes32/uint256 fields. */
export function typedDataValues(fields: FieldSpec[], values: Record<string, unknown>): Record<string, string | bigint> {
  const words = encodeStruct(fields, values);
  return Object.fromEntries(
    fields.map((field, i) => [field.name, field.kind === 'uint' ? BigInt(words[i]!) : words[i]!]),
  );
}

/** The EIP-712 digest (`keccak256(0x1901 ‖ domainSeparator ‖ hashStruct)`) as 0x hex. */
export function typedDataDigest(
  domain: TypedDataDomain,
  primaryType: string,
  fields: FieldSpec[],
  values: Record<string, unknown>,
): string {
  return TypedDataEncoder.hash(domain, typedDataTypes(primaryType, fields), typedDataValues(fields, values));
}
