import { AbiCoder } from 'ethers';
import { describe, expect, it } from 'vitest';
import { encodeProof, toSolidityCallArgs, type Groth16Proof } from './solidity.ts';

const proof: Groth16Proof = {
  pi_a: ['1', '2', '1'],
  pi_b: [['3', '4'], ['5', '6'], ['1', '0']],
  pi_c: ['7', '8', '1'],
  protocol: 'groth16',
  curve: 'bn128',
};

describe('toSolidityCallArgs', () => {
  it('drops the projective coordinate and swaps each G2 coordinate pair', () => {
    expect(toSolidityCallArgs(proof, ['9', '10', '11', '12'])).toEqual({
      pA: [1n, 2n],
      pB: [[4n, 3n], [6n, 5n]],
      pC: [7n, 8n],
      pubSignals: [9n, 10n, 11n, 12n],
    });
  });

  it('rejects a public signal list of the wrong length', () => {
    expect(() => toSolidityCallArgs(proof, ['1', '2', '3'])).toThrow(/publicSignals must have 4 entries, received 3/);
  });

  it('rejects a coordinate that is not a decimal field element', () => {
    expect(() => toSolidityCallArgs({ ...proof, pi_c: ['x', '8', '1'] }, ['1', '2', '3', '4'])).toThrow(/pi_c\[0\]/);
  });
});

describe('encodeProof', () => {
  it('equals abi.encode(uint256[2], uint256[2][2], uint256[2]) of the call arguments', () => {
    const { pA, pB, pC } = toSolidityCallArgs(proof, ['0', '0', '0', '0']);
    const expected = AbiCoder.defaultAbiCoder().encode(['uint256[2]', 'uint256[2][2]', 'uint256[2]'], [pA, pB, pC]);
    expect(encodeProof(proof)).toBe(expected);
  });
});
