import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './dispatcher.ts';
import { seededRandom as seeded } from '../test/support/seeded-random.ts';

const settings = { retryBaseSeconds: 2, retryMaxSeconds: 30 };

describe('the delay before a failed webhook is tried again', () => {
  it('doubles with each failure in a row from WEBHOOK_RETRY_BASE_SECONDS up to WEBHOOK_RETRY_MAX_SECONDS', () => {
    const highest = () => 1;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, settings, highest))).toEqual([2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    // However long the endpoint has failed, the ceiling holds (no overflow to Infinity or NaN).
    expect(retryDelayMs(10_000, settings, highest)).toBe(30_000);
  });

  it('is jittered between half and all of that ceiling, spread over the range, so receivers coming back are not hit in step', () => {
    const random = seeded(25);
    for (const failures of [1, 3, 5]) {
      const ceiling = Math.min(30_000, 2_000 * 2 ** (failures - 1));
      const delays = Array.from({ length: 500 }, () => retryDelayMs(failures, settings, random));
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(ceiling / 2);
      expect(Math.max(...delays)).toBeLessThanOrEqual(ceiling);
      expect(Math.min(...delays)).toBeLessThan(ceiling * 0.55);
      expect(Math.max(...delays)).toBeGreaterThan(ceiling * 0.95);
      expect(new Set(delays).size).toBeGreaterThan(250);
    }
    expect(retryDelayMs(1, settings, () => 0)).toBe(1_000);
  });
});
