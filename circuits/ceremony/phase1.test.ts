import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as snarkjs from 'snarkjs';
import { afterAll, describe, expect, it } from 'vitest';
import { phase1 } from './steps.ts';
import { sha256File } from './transcript.ts';

/**
 * The local phase 1 (`npm run ceremony -- phase1`), at a small power: preparing a power-13 file takes
 * about 5 minutes of both cores, so the ceremony test uses the committed one made by this function
 * (test/fixtures/pot13_ceremony.ptau) and this file checks the function itself. snarkjs's
 * `powersoftau verify` checks every contribution, the beacon and the prepared phase-2 sections.
 */
describe('phase1: a local multi-party powers of tau', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('chains two contributions and a beacon, prepared for phase 2, and snarkjs verifies the file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'phase1-'));
    const out = join(dir, 'pot5.ptau');
    const made = await phase1({ power: 5, out, contributors: ['alice', 'bob'], beaconHash: '0x5f6a1c9e2b7d4f8a' });
    expect(made.sha256).toBe(await sha256File(out));
    expect(made.contributions.map((c) => c.name)).toEqual(['alice', 'bob', 'phase 1 beacon']);
    for (const c of made.contributions) expect(c.hash).toMatch(/^[0-9a-f]{128}$/);
    const problems: string[] = [];
    const logger = { info() {}, debug() {}, warn: (m: string) => problems.push(m), error: (m: string) => problems.push(m) };
    expect(await snarkjs.powersOfTau.verify(out, logger), problems.join('; ')).toBe(true);
  }, 5 * 60_000);
});
