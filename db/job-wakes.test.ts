import { describe, expect, it } from 'vitest';
import { createJobWakes } from './job-wakes.ts';

/** pg-boss's `notifyWorker` as the wakes call it, recording whom it told (the one method they use). */
function recordingBoss() {
  const notified: string[] = [];
  return { notified, boss: { notifyWorker: (id: string) => { notified.push(id); } } };
}

describe('job wakes', () => {
  it('wake the given workers at once for a job due now', () => {
    const { notified, boss } = recordingBoss();
    createJobWakes(boss).at(['a', 'b']);
    expect(notified).toEqual(['a', 'b']);
  });

  it('wake the worker chosen when a later job falls due (the one idle then), not one chosen when it was queued', async () => {
    const { notified, boss } = recordingBoss();
    const wakes = createJobWakes(boss);
    let idle = 'busy-now';
    wakes.at(() => [idle], new Date(Date.now() + 50));
    idle = 'idle-then';
    await expect.poll(() => notified, { timeout: 5_000, message: 'the wake at the job\'s due time' }).toEqual(['idle-then']);
    wakes.close();
  });
});
