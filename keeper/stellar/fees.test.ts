import { describe, expect, it } from 'vitest';
import { feeBumpInclusionFee, feeBumpTotal, initialInclusionFee } from './fees.ts';

describe('Stellar keeper fees', () => {
  it('a first transaction offers what the network asks, at least 100 stroops, within the cap with its resource fee', () => {
    expect(initialInclusionFee(100n, 50_000n, 10_000_000n)).toBe(100n);
    expect(initialInclusionFee(10n, 50_000n, 10_000_000n)).toBe(100n);
    expect(initialInclusionFee(5_000n, 50_000n, 52_000n)).toBe(2_000n);
    expect(initialInclusionFee(100n, 50_000n, 50_050n)).toBeUndefined();
  });

  it('a fee bump offers ten times the last fee per operation, its whole fee (two operations and the resource fee) within the cap', () => {
    expect(feeBumpInclusionFee(100n, 100n, 50_000n, 10_000_000n)).toBe(1_000n);
    expect(feeBumpInclusionFee(100n, 3_000n, 50_000n, 10_000_000n)).toBe(3_000n);
    expect(feeBumpInclusionFee(100n, 100n, 50_000n, 50_800n)).toBe(400n);
    expect(feeBumpTotal(400n, 50_000n)).toBe(50_800n);
    // Nothing above the last offer fits: no fee bump.
    expect(feeBumpInclusionFee(400n, 100n, 50_000n, 50_800n)).toBeUndefined();
  });
});
