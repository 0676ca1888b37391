import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasVerdict, recordVerdict, unsafeVerdictDir, verdictKey } from './ceremony-verdict.ts';

/** The remembered ceremony verdicts: used only where no other user could have written one. */
describe('ceremony verdicts', () => {
  let root: string;
  const subject = { zkeySha256: 'a'.repeat(64), transcriptSha256: 'b'.repeat(64), r1csSha256: 'c'.repeat(64), ptauSha256: 'd'.repeat(64), minContributors: 2 };
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'verdicts-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('names a verdict by every file and the quorum: changing any gives another name', () => {
    const key = verdictKey(subject);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    for (const changed of [{ zkeySha256: 'e'.repeat(64) }, { transcriptSha256: 'e'.repeat(64) }, { r1csSha256: 'e'.repeat(64) }, { ptauSha256: 'e'.repeat(64) }, { minContributors: 3 }]) {
      expect(verdictKey({ ...subject, ...changed })).not.toBe(key);
    }
  });

  it('keeps a verdict in a directory it makes 0700, and finds it again', async () => {
    const dir = join(root, 'own', 'verdicts');
    await mkdir(join(root, 'own'), { mode: 0o755 });
    expect(await unsafeVerdictDir(dir)).toBeUndefined();
    const key = verdictKey(subject);
    expect(await hasVerdict(dir, key)).toBe(false);
    await recordVerdict(dir, key, { contributors: ['Alice', 'Bob'] });
    expect(await hasVerdict(dir, key)).toBe(true);
    expect(await hasVerdict(dir, verdictKey({ ...subject, minContributors: 3 }))).toBe(false);
  });

  it('will not use a directory others may read or write, or one below a directory others may write', async () => {
    const open = join(root, 'open');
    await mkdir(open, { mode: 0o700 });
    await chmod(open, 0o755);
    expect(await unsafeVerdictDir(open)).toMatch(/must be this process's user's, mode 0700 \(it is uid \d+, mode 755\)/);
    const shared = join(root, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    expect(await unsafeVerdictDir(join(shared, 'verdicts'))).toMatch(/shared, above .*verdicts, can be written by another user \(uid \d+, mode 777\)/);
    // Sticky, like /tmp: others cannot replace what is ours there.
    await chmod(shared, 0o1777);
    expect(await unsafeVerdictDir(join(shared, 'verdicts'))).toBeUndefined();
  });

  it('ignores a verdict file others could have written, or reached through a symlink', async () => {
    const dir = join(root, 'files');
    expect(await unsafeVerdictDir(dir)).toBeUndefined();
    const key = verdictKey({ ...subject, zkeySha256: 'f'.repeat(64) });
    await recordVerdict(dir, key, {});
    const [written] = await readdir(dir);
    const elsewhere = join(root, 'elsewhere.json');
    await copyFile(join(dir, written!), elsewhere);
    await chmod(join(dir, written!), 0o644);
    expect(await hasVerdict(dir, key)).toBe(false);
    await rm(join(dir, written!));
    await symlink(elsewhere, join(dir, written!));
    expect(await hasVerdict(dir, key)).toBe(false);
    await rm(join(dir, written!));
    await writeFile(join(dir, written!), JSON.stringify({ key, verified: false }), { mode: 0o600 });
    expect(await hasVerdict(dir, key)).toBe(false);
  });
});
