/** Order of BN254's scalar field: every circuit signal and Poseidon input lives below it. */
export const FIELD_MODULUS = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** Raised when a value is not a canonical BN254 field element (or not a number at all). */
export class FieldElementError extends RangeError {
  constructor(name: string, received: unknown) {
    super(`${name} must be a BN254 field element (0 <= x < p), received '${String(received)}'`);
    this.name = 'FieldElementError';
  }
}

/** Returns `value` unchanged when it is a canonical field element; throws `FieldElementError` naming `name` otherwise. */
export function assertField(value: bigint, name = 'value'): bigint {
  if (typeof value !== 'bigint' || value < 0n || value >= FIELD_MODULUS) throw new FieldElementError(name, value);
  return value;
}

/**
 * Parses a field element from a decimal string (snarkjs's format) or a 0x-prefixed hex string
 * (Solidity's). Anything else, or a number >= p, throws `FieldElementError`.
 */
export function parseField(text: string, name = 'value'): bigint {
  if (typeof text !== 'string' || !/^(0x[0-9a-fA-F]{1,64}|[0-9]{1,78})$/.test(text)) throw new FieldElementError(name, text);
  return assertField(BigInt(text), name);
}

/** A field element as snarkjs writes it: a decimal string without leading zeros. */
export function toDecimal(value: bigint): string {
  return assertField(value).toString(10);
}

/** A field element as a 0x-prefixed, zero-padded 32-byte hex string (a Solidity `bytes32`/`uint256`). */
export function toHex32(value: bigint): string {
  return `0x${assertField(value).toString(16).padStart(64, '0')}`;
}
