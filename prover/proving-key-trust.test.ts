import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifacts, type BuildManifest } from '../circuits/artifacts.ts';
import { sha256File } from '../circuits/ceremony/transcript.ts';
import { ConfigError } from '../config/config.ts';
import { DEVELOPMENT_VK_SHA256 } from '../test/support/proving-key.ts';
import { checkProvingKey } from './proving-key-trust.ts';

/**
 * Production's check of the proving key on the committed development key (cheap refusals: no full
 * ceremony verification runs here). The key accepted on a verified transcript, the verdict
 * remembered, and a tampered transcript refused, are in circuits/ceremony/ceremony.test.ts, which
 * has a real multi-party ceremony's output.
 */
describe('production refuses a proving key whose ceremony is only a label', () => {
  let dir: string;
  let lines: string[];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const config = (extra: Partial<Parameters<typeof checkProvingKey>[0]> = {}): Parameters<typeof checkProvingKey>[0] => ({
    NODE_ENV: 'production', PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256, PROVING_KEY_ALLOW_DEVELOPMENT: false,
    PROVING_KEY_PTAU: join(process.cwd(), 'test', 'fixtures', 'pot13_ceremony.ptau'), PROVING_KEY_VERDICT_DIR: join(dir, 'verdicts'),
    CEREMONY_MIN_CONTRIBUTORS: 2, DATA_DIR: dir, ...extra,
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'proving-key-trust-'));
    // The attack: the development key, its manifest edited to claim a multi-party ceremony.
    await copyFile(artifacts.zkey, join(dir, 'deposit_final.zkey'));
    const manifest = JSON.parse(await readFile(artifacts.manifest, 'utf8')) as BuildManifest;
    manifest.ceremony = {
      kind: 'multi-party', participants: [{ name: 'Alice', contributionHash: 'ab'.repeat(64) }, { name: 'Bob', contributionHash: 'cd'.repeat(64) }],
      beacon: { hash: 'ef'.repeat(32), iterationsExp: 10, contributionHash: '01'.repeat(64) }, vkSha256: DEVELOPMENT_VK_SHA256,
      phase1: { source: 'pot13.ptau', sha256: '23'.repeat(32), power: 13 }, transcript: 'ceremony-transcript.json',
    };
    await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // `manifest` too: what the check read before, so this fails where a label was trusted.
  const files = () => ({ zkey: join(dir, 'deposit_final.zkey'), manifest: join(dir, 'manifest.json'), transcript: join(dir, 'ceremony-transcript.json'), r1cs: artifacts.r1cs });

  it('refuses the development key whose manifest was edited to say multi-party: it has no transcript', async () => {
    lines = [];
    const refused = checkProvingKey(config(), logger, files());
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow(/proving key .*deposit_final\.zkey: its ceremony does not verify, so whoever made its randomness may forge proofs: no ceremony transcript it verifies against/);
  });

  it('refuses it beside a made-up transcript whose hash chain ends at it: the key records one contribution, not the transcript\'s', async () => {
    lines = [];
    const chained = (previous: string, next: string) => ({ previousSha256: previous, newSha256: next, at: '2026-11-29T00:00:00Z' });
    const [zkeySha, ptauSha, r1csSha] = await Promise.all([sha256File(join(dir, 'deposit_final.zkey')), sha256File(config().PROVING_KEY_PTAU!), sha256File(artifacts.r1cs)]);
    await writeFile(files().transcript, JSON.stringify({
      circuit: 'deposit.circom', r1csSha256: r1csSha, phase1: { source: 'pot13.ptau', sha256: ptauSha, power: 13 },
      entries: [
        { step: 'init', name: 'init', contributionHash: null, ...chained(ptauSha, '11'.repeat(32)) },
        { step: 'contribution', name: 'Alice', contributionHash: 'ab'.repeat(64), ...chained('11'.repeat(32), '22'.repeat(32)) },
        { step: 'contribution', name: 'Bob', contributionHash: 'cd'.repeat(64), ...chained('22'.repeat(32), '33'.repeat(32)) },
        { step: 'beacon', name: 'beacon', contributionHash: 'ef'.repeat(64), beacon: { hash: 'ef'.repeat(32), iterationsExp: 10 }, ...chained('33'.repeat(32), zkeySha) },
      ],
    }));
    await expect(checkProvingKey(config(), logger, files()))
      .rejects.toThrow(/its ceremony does not verify, .*: the zkey records the contributions "dev phase 2"; the transcript "Alice", "Bob", beacon "beacon"/);
    await rm(files().transcript);
  });

  it('with PROVING_KEY_ALLOW_DEVELOPMENT (production-mode test stacks) proves with it, saying why at every start', async () => {
    lines = [];
    const key = await checkProvingKey(config({ PROVING_KEY_ALLOW_DEVELOPMENT: true }), logger, files());
    expect(key?.vkSha256).toBe(DEVELOPMENT_VK_SHA256);
    const warning = lines.map((line) => JSON.parse(line) as { msg: string; reason?: string }).find((line) => line.msg.startsWith('PROVING_KEY_ALLOW_DEVELOPMENT'));
    expect(warning?.reason).toMatch(/no ceremony transcript/);
  });

  it('still refuses a key whose verification key is not PROVING_KEY_VK_SHA256, whatever else holds', async () => {
    await expect(checkProvingKey(config({ PROVING_KEY_ALLOW_DEVELOPMENT: true, PROVING_KEY_VK_SHA256: 'ab'.repeat(32) }), logger, files()))
      .rejects.toThrow(new RegExp(`its verification key hashes to ${DEVELOPMENT_VK_SHA256}, not PROVING_KEY_VK_SHA256 ${'ab'.repeat(32)}`));
  });
});
