import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, realpath, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * The remembered outcome of a full ceremony verification (prover/proving-key-trust.ts): one file per
 * verified key, named by the sha256 of what was verified (the four files' sha256s and the rules), so
 * a later start with the same files skips the minutes of snarkjs's check and any change to a file,
 * or to the rules, verifies again. Only a positive verdict is kept.
 *
 * The file is a claim "this was verified", so it is trusted only where no one but this process's
 * user could have written it: the directory, every directory above it (unless sticky, like /tmp,
 * where others cannot replace what is ours) and the file are owned by this user or root and not
 * writable by group or others; the file is opened without following a symlink. Anything else makes
 * the cache unusable (the caller verifies in full every time), never a verdict.
 */

/** Bumped when what a verification checks changes, so older verdicts no longer count. */
const RULES = 'ceremony-verdict/2: transcript chain, beacon, quorum, every contribution changes the key, snarkjs zkey verify from the r1cs';

/** What a verdict is about: each file's sha256 and the quorum the ceremony was held to. */
export interface VerdictSubject {
  zkeySha256: string;
  transcriptSha256: string;
  r1csSha256: string;
  ptauSha256: string;
  minContributors: number;
}

/** The cache key of a subject (hex sha256). */
export function verdictKey(subject: VerdictSubject): string {
  return createHash('sha256').update(JSON.stringify({ rules: RULES, ...subject })).digest('hex');
}

/** The sticky bit: in such a directory only an entry's owner (or root) may rename or remove it. */
const STICKY = 0o1000;
const uid = () => process.getuid?.() ?? -1;
const ownedSafely = (owner: number) => owner === uid() || owner === 0;

/** Why `dir` cannot hold verdicts, or undefined when it can (created 0700 when missing). */
export async function unsafeVerdictDir(dir: string): Promise<string | undefined> {
  const absolute = resolve(dir);
  try {
    await mkdir(absolute, { recursive: true, mode: 0o700 });
    const own = await stat(absolute);
    if (!own.isDirectory()) return `${absolute} is not a directory`;
    if (own.uid !== uid() || (own.mode & 0o077) !== 0) {
      return `${absolute} must be this process's user's, mode 0700 (it is uid ${own.uid}, mode ${(own.mode & 0o777).toString(8)})`;
    }
    // Both the path as given and where it really leads: a symlink on the way is only as safe as its directory.
    for (const start of new Set([absolute, await realpath(absolute)])) {
      for (let at = dirname(start); ; at = dirname(at)) {
        const s = await stat(at);
        const othersMayWrite = (s.mode & 0o022) !== 0 && (s.mode & STICKY) === 0;
        if (!ownedSafely(s.uid) || othersMayWrite) {
          return `${at}, above ${absolute}, can be written by another user (uid ${s.uid}, mode ${(s.mode & 0o7777).toString(8)})`;
        }
        if (at === dirname(at)) break;
      }
    }
    return undefined;
  } catch (error) {
    return `${absolute} cannot be used: ${(error as Error).message}`;
  }
}

/** Whether `dir` holds a positive verdict for `key` written by this user (see the module's note). */
export async function hasVerdict(dir: string, key: string): Promise<boolean> {
  let file;
  try {
    file = await open(join(resolve(dir), `${key}.json`), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    const s = await file.stat();
    if (!s.isFile() || s.uid !== uid() || (s.mode & 0o077) !== 0 || s.size > 64 * 1024) return false;
    const verdict = JSON.parse(await file.readFile('utf8')) as { key?: unknown; verified?: unknown };
    return verdict.key === key && verdict.verified === true;
  } catch {
    return false;
  } finally {
    await file.close();
  }
}

/** Records a positive verdict for `key` (0600, written whole then renamed into place). */
export async function recordVerdict(dir: string, key: string, facts: Record<string, unknown>): Promise<void> {
  const target = join(resolve(dir), `${key}.json`);
  const temporary = `${target}.${process.pid}.tmp`;
  const verdict = { ...facts, key, verified: true, rules: RULES, at: new Date().toISOString() };
  await writeFile(temporary, `${JSON.stringify(verdict, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  await rename(temporary, target);
}
