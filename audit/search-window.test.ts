import { describe, expect, it } from 'vitest';
import { SEARCH_GRACE_SECONDS, searchStart } from '../chains/timing.ts';

describe('where the audit starts a log search', () => {
  it('is the signed-request TTL plus the clock grace before the deadline, not a fixed day', () => {
    const deadline = new Date('2026-11-24T06:00:00Z');
    expect(searchStart(deadline, 600)).toEqual(new Date(deadline.getTime() - (600 + SEARCH_GRACE_SECONDS) * 1000));
    expect(searchStart(deadline, 3_600).getTime()).toBe(deadline.getTime() - (3_600 + SEARCH_GRACE_SECONDS) * 1000);
  });
});
