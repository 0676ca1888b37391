import { parseField } from './field.ts';

/** A Groth16 proof as snarkjs returns it (projective coordinates as decimal strings). */
export interface Groth16Proof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
  protocol: string;
  curve: string;
}

/** The argument arrays of `Groth16Verifier.verifyProof(uint[2], uint[2][2], uint[2], uint[4])`. */
export interface SolidityCallArgs {
  pA: [bigint, bigint];
  pB: [[bigint, bigint], [bigint, bigint]];
  pC: [bigint, bigint];
  pubSignals: [bigint, bigint, bigint, bigint];
}

/** Number of public signals of the deposit circuit: root, orderHashHi, orderHashLo, nullifierHash. */
export const PUBLIC_SIGNAL_COUNT = 4;

/**
 * Converts a snarkjs proof and its public signals to the verifier contract's arguments.
 * G2 coordinates are swapped ([x1, x0] per point) because snarkjs writes Fp2 elements as
 * (c0, c1) while the EVM pairing precompile expects (c1, c0).
 */
export function toSolidityCallArgs(proof: Groth16Proof, publicSignals: readonly string[]): SolidityCallArgs {
  if (publicSignals.length !== PUBLIC_SIGNAL_COUNT) {
    throw new RangeError(`publicSignals must have ${PUBLIC_SIGNAL_COUNT} entries, received ${publicSignals.length}`);
  }
  const f = (v: string | undefined, name: string) => parseField(v ?? '', name);
  const b = proof.pi_b;
  return {
    pA: [f(proof.pi_a[0], 'pi_a[0]'), f(proof.pi_a[1], 'pi_a[1]')],
    pB: [
      [f(b[0]?.[1], 'pi_b[0][1]'), f(b[0]?.[0], 'pi_b[0][0]')],
      [f(b[1]?.[1], 'pi_b[1][1]'), f(b[1]?.[0], 'pi_b[1][0]')],
    ],
    pC: [f(proof.pi_c[0], 'pi_c[0]'), f(proof.pi_c[1], 'pi_c[1]')],
    pubSignals: publicSignals.map((s, i) => f(s, `publicSignals[${i}]`)) as SolidityCallArgs['pubSignals'],
  };
}

/**
 * The proof as one 0x hex string: `abi.encode(uint256[2] pA, uint256[2][2] pB, uint256[2] pC)`
 * (eight 32-byte words, B already swapped), so a contract can `abi.decode` it straight into
 * `verifyProof`'s first three arguments. This is the serialized `proof` of the unlock response.
 */
export function encodeProof(proof: Groth16Proof): string {
  const { pA, pB, pC } = toSolidityCallArgs(proof, ['0', '0', '0', '0']);
  const words = [...pA, ...pB[0], ...pB[1], ...pC];
  return `0x${words.map((w) => w.toString(16).padStart(64, '0')).join('')}`;
}
