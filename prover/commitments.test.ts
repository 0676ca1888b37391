import { buildPoseidon } from 'circomlibjs';
import { describe, expect, it } from 'vitest';
import {
  joinOrderHash, leafOf, nullifierHashOf, randomSecret, secretCommitment, splitOrderHash, TREE_DEPTH, zeroHashes,
} from './commitments.ts';
import { FIELD_MODULUS } from './field.ts';

const ORDER_HASH = '0x8f3a6c5e2b1d4f7a9c0e3b6d8a1f4c7e0b3d6a9c2f5e8b1d4a7c0f3e6b9d2a5c';

describe('commitments', () => {
  it('splits an order hash into its top and bottom 128 bits and joins it back', () => {
    const { hi, lo } = splitOrderHash(ORDER_HASH);
    expect(hi).toBe(0x8f3a6c5e2b1d4f7a9c0e3b6d8a1f4c7en);
    expect(lo).toBe(0x0b3d6a9c2f5e8b1d4a7c0f3e6b9d2a5cn);
    expect(joinOrderHash({ hi, lo })).toBe(ORDER_HASH);
    expect(splitOrderHash(`0x${'f'.repeat(64)}`)).toEqual({ hi: (1n << 128n) - 1n, lo: (1n << 128n) - 1n });
  });

  it('rejects an order hash that is not 32 bytes of hex, naming the parameter', () => {
    expect(() => splitOrderHash('0x1234')).toThrow(/orderHash must be .* received '0x1234'/);
    expect(() => splitOrderHash('8f'.repeat(32))).toThrow(TypeError);
  });

  it('draws distinct non-zero secrets inside the field', () => {
    const secrets = new Set<bigint>();
    for (let i = 0; i < 200; i++) {
      const s = randomSecret();
      expect(s > 0n && s < FIELD_MODULUS).toBe(true);
      secrets.add(s);
    }
    expect(secrets.size).toBe(200);
  });

  it('derives commitment, leaf and nullifier with the documented Poseidon layout (checked against circomlibjs)', async () => {
    const ref = await buildPoseidon();
    const h = (xs: bigint[]) => ref.F.toObject(ref(xs));
    const secret = 123456789n;
    const { hi, lo } = splitOrderHash(ORDER_HASH);
    expect(secretCommitment(secret)).toBe(h([secret]));
    expect(leafOf(ORDER_HASH, secretCommitment(secret))).toBe(h([hi, lo, h([secret])]));
    expect(leafOf({ hi, lo }, 5n)).toBe(leafOf(ORDER_HASH, 5n));
    expect(nullifierHashOf(secret)).toBe(h([secret, 1n]));
  });

  it('gives one zero hash per level, from 0 up to the empty root', async () => {
    const ref = await buildPoseidon();
    const zeros = zeroHashes();
    expect(zeros).toHaveLength(TREE_DEPTH + 1);
    expect(zeros[0]).toBe(0n);
    for (let i = 0; i < TREE_DEPTH; i++) expect(zeros[i + 1]).toBe(ref.F.toObject(ref([zeros[i]!, zeros[i]!])));
    expect(Object.isFrozen(zeros)).toBe(true);
  });
});
