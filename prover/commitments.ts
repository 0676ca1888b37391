import { randomBytes } from 'node:crypto';
import { assertField, FIELD_MODULUS } from './field.ts';
import { poseidon, poseidon2 } from './poseidon.ts';

/**
 * The hash layout shared by the circuit (circuits/deposit.circom), the OrderPortal contract and
 * this service. Changing anything here changes the circuit and the contracts: see circuits/README.md.
 *
 *   secretCommitment = Poseidon1(secret)
 *   leaf             = Poseidon3(orderHashHi, orderHashLo, secretCommitment)
 *   nullifierHash    = Poseidon2(secret, 1)
 *   node             = Poseidon2(left, right); zeros[0] = 0, zeros[i+1] = Poseidon2(zeros[i], zeros[i])
 */

/** Depth of the OrderPortal's incremental tree and of the circuit's path (2^20 deposits per portal). */
export const TREE_DEPTH = 20;

const TWO_128 = 1n << 128n;

/** The two 128-bit halves of a 256-bit EIP-712 order hash; each fits one BN254 field element. */
export interface OrderHashParts {
  /** Top 128 bits: `uint256(orderHash) >> 128`. */
  hi: bigint;
  /** Bottom 128 bits: `uint256(orderHash) & (2^128 - 1)`. */
  lo: bigint;
}

/** Splits a 0x-prefixed 32-byte hex order hash into its high and low 128-bit halves. */
export function splitOrderHash(orderHash: string): OrderHashParts {
  if (typeof orderHash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(orderHash)) {
    throw new TypeError(`orderHash must be a 0x-prefixed 32-byte hex string, received '${String(orderHash)}'`);
  }
  const value = BigInt(orderHash);
  return { hi: value >> 128n, lo: value & (TWO_128 - 1n) };
}

/** Inverse of `splitOrderHash`: the lower-case 0x-prefixed 32-byte hex order hash. */
export function joinOrderHash({ hi, lo }: OrderHashParts): string {
  if (hi < 0n || hi >= TWO_128 || lo < 0n || lo >= TWO_128) {
    throw new RangeError(`order hash halves must each be below 2^128, received hi=${hi} lo=${lo}`);
  }
  return `0x${((hi << 128n) | lo).toString(16).padStart(64, '0')}`;
}

/**
 * A fresh uniformly random non-zero field element from the OS CSPRNG, to be kept secret per trade.
 * Rejection sampling over 254-bit draws, so there is no modulo bias.
 */
export function randomSecret(): bigint {
  for (;;) {
    const bytes = randomBytes(32);
    bytes[0]! &= 0x3f; // keep 254 bits: p < 2^254, so about 3 draws in 4 are accepted
    const candidate = BigInt(`0x${bytes.toString('hex')}`);
    if (candidate !== 0n && candidate < FIELD_MODULUS) return candidate;
  }
}

/** `Poseidon1(secret)`: what the Bridger's deposit hands the OrderPortal alongside the order hash. */
export function secretCommitment(secret: bigint): bigint {
  return poseidon([assertField(secret, 'secret')]);
}

/**
 * The tree leaf the OrderPortal appends on deposit: `Poseidon3(orderHashHi, orderHashLo, commitment)`.
 * `orderHash` is the 0x-prefixed 32-byte EIP-712 hash (or its halves).
 */
export function leafOf(orderHash: string | OrderHashParts, commitment: bigint): bigint {
  const { hi, lo } = typeof orderHash === 'string' ? splitOrderHash(orderHash) : orderHash;
  return poseidon([hi, lo, assertField(commitment, 'commitment')]);
}

/** `Poseidon2(secret, 1)`: the one nullifier of the trade that owns `secret`. */
export function nullifierHashOf(secret: bigint): bigint {
  return poseidon2(assertField(secret, 'secret'), 1n);
}

let zeros: readonly bigint[] | undefined;

/**
 * The roots of empty subtrees: `zeroHashes()[h]` is the root of an all-zero subtree of height h,
 * for h = 0..TREE_DEPTH (so the last entry is the root of the empty tree). Computed once.
 */
export function zeroHashes(): readonly bigint[] {
  if (!zeros) {
    const out = [0n];
    for (let h = 0; h < TREE_DEPTH; h++) out.push(poseidon2(out[h]!, out[h]!));
    zeros = Object.freeze(out);
  }
  return zeros;
}
