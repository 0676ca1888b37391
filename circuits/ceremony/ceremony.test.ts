import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Contract, ContractFactory, JsonRpcProvider, NonceManager, Wallet } from 'ethers';
import { pino } from 'pino';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSolidity } from '../../contracts/evm/compile.ts';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { SOROBAN_HOST_TESTS } from '../../devnet/stellar/build.ts';
import { sorobanKeyBytes } from '../../chains/deployed-verifiers.ts';
import { checkProvingKey, verificationKeyOf, type VerificationKeyJson } from '../../prover/proving-key-trust.ts';
import { encodeProof, toSolidityCallArgs, type Groth16Proof, type SolidityCallArgs } from '../../prover/solidity.ts';
import { sampleProofInput } from '../../test/support/circuit-vectors.ts';
import { DEVELOPMENT_VK_SHA256 } from '../../test/support/proving-key.ts';
import { artifacts, type BuildManifest } from '../artifacts.ts';
import { BUILD_DIR } from '../compile.ts';
import { verificationKeySha256 } from '../verification-key.ts';
import { forgeIdentityContribution } from '../../test/support/identity-contribution.ts';
import { readRecordedDeltas } from './recorded-deltas.ts';
import { readTranscript, sha256File, writeTranscript, type TranscriptEntry } from './transcript.ts';
import { verifyCeremony, verifyZkeyCryptography } from './zkey-check.ts';

/**
 * The ceremony end to end on the real circuit, each step in its own process as each party would
 * run it (`npm run ceremony -- <verb>`): init from a pinned phase 1, three contributions each
 * verifying the previous file, a beacon, verify, finalize; then proofs made with the result verify
 * in a real EVM (the regenerated Verifier.sol on anvil) and in the Soroban host (the regenerated
 * params.rs key data, contracts/soroban/tests/src/ceremony_key.rs). Tampered files and transcripts
 * are refused.
 *
 * Phase 1 is test/fixtures/pot13_ceremony.ptau, pinned by its sha256: the tool's own local
 * multi-party powers of tau (`npm run ceremony -- phase1 --power 13 --contributors phase1-alice,phase1-bob
 * --beacon <BEACON>`), committed because preparing it takes about 5 minutes of both cores, which every
 * fresh clone (CI) paid before; it does not depend on the circuit. phase1.test.ts runs `phase1` itself
 * at a small power.
 *
 * Only the final `verify` recomputes the first zkey from the r1cs and phase 1 (snarkjs's full check,
 * about 15 s); every other check verifies from the init zkey, which the transcript pins by hash and
 * that full check ties to the r1cs (contribute and beacon `--init`, finalize `--init`, the refusals).
 */
const run = promisify(execFile);
const ROOT = join(BUILD_DIR, '..', '..');
const PTAU = join(ROOT, 'test', 'fixtures', 'pot13_ceremony.ptau');
/** The committed phase 1's sha256: init refuses any other file (the first test). */
const PTAU_SHA256 = 'fd6e1ed55bf4725e44877409e9b5ba4f23987cc66163373131278f2f5a913e13';
const BEACON = '0x5f6a1c9e2b7d4f8a3c6e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a';
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

/** `npm run ceremony -- verb args` as a separate process: its exit code, stdout and stderr. */
function ceremony(...args: string[]): Promise<{ code: number; out: string }> {
  return ceremonyWith({}, ...args);
}

/** `ceremony` with settings added to its environment (CEREMONY_MIN_CONTRIBUTORS). */
async function ceremonyWith(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'tools/ceremony/cli.ts', ...args], { cwd: ROOT, maxBuffer: 16 << 20, env: { ...process.env, ...env } });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout + failed.stderr };
  }
}

const timings: Record<string, number> = {};
async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await step();
  timings[label] = Math.round(performance.now() - started) / 1000;
  return result;
}

describe('a three-party proving-key ceremony with a beacon, on the real circuit', () => {
  let dir: string;
  let out: string;
  let ptauSha: string;
  const zkey = (n: number) => join(dir, `deposit_000${n}.zkey`);
  let transcriptFile: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ceremony-'));
    out = join(dir, 'build');
    transcriptFile = join(dir, 'transcript.json');
    ptauSha = await sha256File(PTAU);
    expect(ptauSha, 'test/fixtures/pot13_ceremony.ptau is the pinned phase 1').toBe(PTAU_SHA256);
  });

  afterAll(async () => {
    console.info(`ceremony timings (s): ${JSON.stringify(timings)}`);
    await rm(dir, { recursive: true, force: true });
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('refuses a phase-1 file that is not the pinned one', async () => {
    const refused = await ceremony('init', '--ptau', PTAU, '--ptau-sha256', '0'.repeat(64), '--out', zkey(0), '--transcript', transcriptFile);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/refused: phase-1 file .* has sha256 [0-9a-f]{64}, not the pinned 0{64}/);
  });

  it('runs init, three contributions, each verifying the one before, and the beacon; verify accepts the whole chain', async () => {
    const started = performance.now();
    expect((await timed('init', () => ceremony('init', '--ptau', PTAU, '--ptau-sha256', ptauSha, '--out', zkey(0), '--transcript', transcriptFile))).code).toBe(0);
    for (const [i, name] of ['Alice', 'Bob', 'Carol'].entries()) {
      const result = await timed(`contribute ${name}`, () => ceremony('contribute', '--ptau', PTAU, '--init', zkey(0), '--in', zkey(i), '--out', zkey(i + 1), '--name', name, '--transcript', transcriptFile));
      expect(result.code, result.out).toBe(0);
      expect(result.out).toMatch(new RegExp(`contribution by ${name}: [0-9a-f]{128}`));
    }
    const closed = await timed('beacon', () => ceremony('beacon', '--ptau', PTAU, '--init', zkey(0), '--in', zkey(3), '--out', zkey(4), '--beacon', BEACON, '--iterations', '10', '--transcript', transcriptFile));
    expect(closed.code, closed.out).toBe(0);
    const verified = await timed('verify', () => ceremony('verify', '--ptau', PTAU, '--zkey', zkey(4), '--transcript', transcriptFile, '--final'));
    expect(verified.code, verified.out).toBe(0);
    expect(verified.out).toMatch(/ceremony verifies: 4 contributions/);
    timings['phase 2 total'] = Math.round(performance.now() - started) / 1000;

    const transcript = await readTranscript(transcriptFile);
    expect(transcript.entries.map((e) => `${e.step}:${e.name}`)).toEqual(['init:init', 'contribution:Alice', 'contribution:Bob', 'contribution:Carol', 'beacon:beacon']);
    for (const [i, entry] of transcript.entries.entries()) {
      expect(entry.previousSha256).toBe(i === 0 ? ptauSha : transcript.entries[i - 1]!.newSha256);
      expect(entry.newSha256).toBe(await sha256File(zkey(i)));
    }
    expect(transcript.entries.at(-1)!.beacon).toEqual({ hash: BEACON.slice(2), iterationsExp: 10 });
  }, 15 * 60_000);

  it('refuses to build on a tampered contribution, and verify refuses it', async () => {
    const tampered = join(dir, 'tampered.zkey');
    const bytes = await readFile(zkey(2));
    // A byte inside the zkey's proving-key sections (past the header and the contributions' record).
    bytes[Math.floor(bytes.length * 0.6)]! ^= 0xff;
    await writeFile(tampered, bytes);
    const forked = join(dir, 'forked-transcript.json');
    const transcript = await readTranscript(transcriptFile);
    transcript.entries = transcript.entries.slice(0, 3);
    await writeTranscript(forked, transcript);
    const refused = await ceremony('contribute', '--ptau', PTAU, '--init', zkey(0), '--in', tampered, '--out', join(dir, 'never.zkey'), '--name', 'Dave', '--transcript', forked);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/refused: transcript: the last entry wrote [0-9a-f]{64}, but the zkey given has sha256/);
    expect(existsSync(join(dir, 'never.zkey'))).toBe(false);

    // A forger who also rewrites the transcript to the tampered file's hash: the hash chain now holds, snarkjs does not.
    transcript.entries[2]!.newSha256 = await sha256File(tampered);
    await writeTranscript(forked, transcript);
    await expect(verifyCeremony({ r1cs: artifacts.r1cs, ptau: PTAU, zkey: tampered, transcript, init: zkey(0) })).rejects.toThrow(/does not verify/);
  }, 5 * 60_000);

  it('refuses a transcript whose hashes do not chain, or whose contributions are not the zkey\'s', async () => {
    const broken = await readTranscript(transcriptFile);
    broken.entries[2]!.previousSha256 = broken.entries[0]!.newSha256;
    const brokenFile = join(dir, 'broken-transcript.json');
    await writeTranscript(brokenFile, broken);
    const refused = await ceremony('verify', '--ptau', PTAU, '--zkey', zkey(4), '--transcript', brokenFile);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/transcript entry 2 \(contribution by "Bob"\): previousSha256 [0-9a-f]{64} does not chain/);

    const renamed = await readTranscript(transcriptFile);
    renamed.entries[1]!.name = 'Mallory';
    await expect(verifyCeremony({ r1cs: artifacts.r1cs, ptau: PTAU, zkey: zkey(4), transcript: renamed, init: zkey(0) })).rejects.toThrow(/the zkey records the contributions "Alice", "Bob", "Carol", beacon "beacon"; the transcript "Mallory", "Bob"/);

    const unclosed = await readTranscript(transcriptFile);
    unclosed.entries = unclosed.entries.slice(0, 4);
    await expect(verifyCeremony({ r1cs: artifacts.r1cs, ptau: PTAU, zkey: zkey(3), transcript: unclosed, requireBeacon: true })).rejects.toThrow(/not closed/);
  }, 5 * 60_000);

  describe('a ceremony that changes nothing', () => {
    /** The transcript entry an attacker would append for a zkey it made. */
    const entryFor = async (step: 'contribution' | 'beacon', name: string, hash: string, previous: string, file: string): Promise<TranscriptEntry> => ({
      step, name, contributionHash: hash, previousSha256: await sha256File(previous), newSha256: await sha256File(file), at: new Date().toISOString(),
      ...(step === 'beacon' ? { beacon: { hash: BEACON.slice(2), iterationsExp: 10 } } : {}),
    });
    /** The beacon applied by snarkjs itself, as someone skipping the tool's refusal would. */
    const snarkjsBeacon = async (from: string, to: string) => Buffer.from(await snarkjs.zKey.beacon(from, to, 'beacon', BEACON.slice(2), 10) as Uint8Array).toString('hex');
    const transcriptOf = async (file: string, entries: TranscriptEntry[]) => {
      const transcript = await readTranscript(transcriptFile);
      transcript.entries = [transcript.entries[0]!, ...entries];
      await writeTranscript(file, transcript);
      return transcript;
    };

    it('refuses a contribution that does not change the key (x = 1), which snarkjs alone accepts, and builds nothing on it', async () => {
      const first = await readRecordedDeltas(zkey(0));
      expect(first.contributions).toEqual([]);
      expect(first.headerDelta, 'the init step\'s delta is the generator the check starts from').toBe(first.initialDelta);

      const forged = join(dir, 'identity.zkey');
      const hash = await forgeIdentityContribution(zkey(1), forged, 'Mallory');
      const alice = (await readTranscript(transcriptFile)).entries[1]!;
      const forgedTranscript = join(dir, 'identity-transcript.json');
      const transcript = await transcriptOf(forgedTranscript, [alice, await entryFor('contribution', 'Mallory', hash, zkey(1), forged)]);
      const recorded = await verifyZkeyCryptography(artifacts.r1cs, PTAU, forged, zkey(0));
      expect(recorded.map((c) => `${c.name} ${c.hash}`), 'snarkjs verifies the identity contribution').toEqual([`Alice ${alice.contributionHash}`, `Mallory ${hash}`]);

      await expect(verifyCeremony({ r1cs: artifacts.r1cs, ptau: PTAU, zkey: forged, transcript, init: zkey(0) }))
        .rejects.toThrow(/contribution 2 \("Mallory"\) does not change the key: its public key is x = 1 \(an identity contribution\)/);
      const refused = await ceremony('contribute', '--ptau', PTAU, '--init', zkey(0), '--in', forged, '--out', join(dir, 'never-on-identity.zkey'), '--name', 'Dave', '--transcript', forgedTranscript);
      expect(refused.code, refused.out).toBe(1);
      expect(refused.out).toMatch(/refused: zkey .*identity\.zkey: contribution 2 \("Mallory"\) does not change the key/);
      expect(existsSync(join(dir, 'never-on-identity.zkey'))).toBe(false);
    }, 5 * 60_000);

    it('verify --final refuses a ceremony of identity contributions only, one with no contributor, and one short of CEREMONY_MIN_CONTRIBUTORS', async () => {
      const mallory = join(dir, 'only-identity-1.zkey');
      const trent = join(dir, 'only-identity-2.zkey');
      const closed = join(dir, 'only-identity-final.zkey');
      const entries = [await entryFor('contribution', 'Mallory', await forgeIdentityContribution(zkey(0), mallory, 'Mallory'), zkey(0), mallory)];
      entries.push(await entryFor('contribution', 'Trent', await forgeIdentityContribution(mallory, trent, 'Trent'), mallory, trent));
      entries.push(await entryFor('beacon', 'beacon', await snarkjsBeacon(trent, closed), trent, closed));
      const identityOnly = join(dir, 'only-identity-transcript.json');
      await transcriptOf(identityOnly, entries);
      const allIdentity = await ceremony('verify', '--ptau', PTAU, '--zkey', closed, '--transcript', identityOnly, '--final');
      expect(allIdentity.code, allIdentity.out).toBe(1);
      expect(allIdentity.out).toMatch(/refused: zkey .*: contribution 1 \("Mallory"\) does not change the key/);

      const initOnly = join(dir, 'init-only-transcript.json');
      await transcriptOf(initOnly, []);
      const noContributor = join(dir, 'no-contributor.zkey');
      const noContributorTranscript = join(dir, 'no-contributor-transcript.json');
      await transcriptOf(noContributorTranscript, [await entryFor('beacon', 'beacon', await snarkjsBeacon(zkey(0), noContributor), zkey(0), noContributor)]);
      const tool = await ceremony('beacon', '--ptau', PTAU, '--init', zkey(0), '--in', zkey(0), '--out', join(dir, 'never-closed.zkey'), '--beacon', BEACON, '--transcript', initOnly);
      expect(tool.code, tool.out).toBe(1);
      expect(tool.out).toMatch(/refused: the ceremony has 0 distinct contributors before its beacon; a finished one needs at least 2 \(CEREMONY_MIN_CONTRIBUTORS\)/);
      const bare = await ceremony('verify', '--ptau', PTAU, '--zkey', noContributor, '--transcript', noContributorTranscript, '--final');
      expect(bare.code, bare.out).toBe(1);
      expect(bare.out).toMatch(/refused: the ceremony has 0 distinct contributors before its beacon; a finished one needs at least 2/);

      const short = await ceremonyWith({ CEREMONY_MIN_CONTRIBUTORS: '4' }, 'verify', '--ptau', PTAU, '--zkey', zkey(4), '--transcript', transcriptFile, '--final');
      expect(short.code, short.out).toBe(1);
      expect(short.out).toMatch(/refused: the ceremony has 3 distinct contributors before its beacon; a finished one needs at least 4/);
    }, 5 * 60_000);
  });

  describe('finalized, its proofs verify on chain', () => {
    let manifest: BuildManifest;
    let vk: VerificationKeyJson;
    let proof: Groth16Proof;
    let signals: string[];
    let anvil: AnvilInstance;
    let provider: JsonRpcProvider;

    beforeAll(async () => {
      const finalized = await timed('finalize', () => ceremony('finalize', '--ptau', PTAU, '--init', zkey(0), '--zkey', zkey(4), '--transcript', transcriptFile, '--out-dir', out, '--soroban-params', join(out, 'params.rs')));
      expect(finalized.code, finalized.out).toBe(0);
      manifest = JSON.parse(await readFile(join(out, 'manifest.json'), 'utf8')) as BuildManifest;
      vk = await verificationKeyOf(join(out, 'deposit_final.zkey'));
      const proved = await timed('prove (snarkjs)', () => snarkjs.groth16.fullProve({ ...sampleProofInput().input }, artifacts.wasm, join(out, 'deposit_final.zkey')));
      proof = proved.proof as Groth16Proof;
      signals = proved.publicSignals;
      anvil = await startAnvil({ chainId: 31_339 });
      provider = new JsonRpcProvider(anvil.rpcUrl, anvil.chainId, { staticNetwork: true });
    }, 5 * 60_000);
    afterAll(async () => {
      provider?.destroy();
      await anvil?.stop();
    });

    it('writes the manifest with the ceremony\'s facts and every file\'s hash', async () => {
      expect(manifest.ceremony).toMatchObject({
        kind: 'multi-party',
        participants: [{ name: 'Alice' }, { name: 'Bob' }, { name: 'Carol' }],
        beacon: { hash: BEACON.slice(2), iterationsExp: 10 },
        phase1: { sha256: ptauSha, power: 13 },
        transcript: 'ceremony-transcript.json',
      });
      const written = await readFile(join(out, 'verification_key.json'), 'utf8');
      expect(manifest.ceremony.vkSha256).toBe(await sha256File(join(out, 'verification_key.json')));
      expect(verificationKeySha256(vk)).toBe(manifest.ceremony.vkSha256);
      expect(JSON.parse(written)).toEqual(vk);
      for (const file of ['deposit_final.zkey', 'verification_key.json', 'Verifier.sol', 'deposit.r1cs', 'ceremony-transcript.json']) {
        expect(manifest.sha256[file], file).toBe(await sha256File(join(out, file)));
      }
      expect(manifest.sha256['deposit_final.zkey']).toBe(await sha256File(zkey(4)));
      // A new key: not the committed development one.
      expect(manifest.ceremony.vkSha256).not.toBe(await sha256File(artifacts.verificationKey));
    });

    it('production trusts the finalized key on its transcript, verified once and then remembered, and refuses a missing or tampered one', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const files = { zkey: join(out, 'deposit_final.zkey'), transcript: join(out, 'ceremony-transcript.json'), r1cs: join(out, 'deposit.r1cs') };
      const verdicts = join(dir, 'verdicts');
      const config = {
        NODE_ENV: 'production', PROVING_KEY_VK_SHA256: manifest.ceremony.vkSha256, PROVING_KEY_ALLOW_DEVELOPMENT: false, PROVING_KEY_PTAU: PTAU,
        PROVING_KEY_VERDICT_DIR: verdicts, CEREMONY_MIN_CONTRIBUTORS: 2, DATA_DIR: dir,
      } as const;
      const verdictOf = () => JSON.parse(lines.at(-1)!) as { msg: string; verdict: string; contributors: string[] };

      expect((await timed('production check, full', () => checkProvingKey(config, logger, files)))?.vkSha256).toBe(manifest.ceremony.vkSha256);
      expect(verdictOf()).toMatchObject({ msg: 'proving key: its multi-party ceremony verifies', verdict: 'verified now', contributors: ['Alice', 'Bob', 'Carol'] });
      const kept = await readdir(verdicts);
      expect(kept).toHaveLength(1);
      expect((await stat(join(verdicts, kept[0]!))).mode & 0o777).toBe(0o600);
      expect((await timed('production check, remembered', () => checkProvingKey(config, logger, files)))?.vkSha256).toBe(manifest.ceremony.vkSha256);
      expect(verdictOf().verdict).toBe('remembered');

      const tampered = await readTranscript(files.transcript);
      tampered.entries[2]!.name = 'Mallory';
      const tamperedFile = join(dir, 'tampered-final-transcript.json');
      await writeTranscript(tamperedFile, tampered);
      await expect(checkProvingKey(config, logger, { ...files, transcript: tamperedFile }))
        .rejects.toThrow(/proving key .*deposit_final\.zkey: its ceremony does not verify, so whoever made its randomness may forge proofs: the zkey records the contributions "Alice", "Bob"/);
      await expect(checkProvingKey(config, logger, { ...files, transcript: join(dir, 'no-such-transcript.json') }))
        .rejects.toThrow(/its ceremony does not verify, .*: no ceremony transcript it verifies against \(transcript .*no-such-transcript\.json cannot be read/);
      await expect(checkProvingKey({ ...config, PROVING_KEY_PTAU: undefined }, logger, files))
        .rejects.toThrow(new RegExp(`PROVING_KEY_PTAU is not set: the path of the phase-1 file its transcript .* pins \\(sha256 ${PTAU_SHA256}`));
      // The development key beside this ceremony's transcript: the transcript is not that key's.
      await expect(checkProvingKey({ ...config, PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256 }, logger, { ...files, zkey: artifacts.zkey }))
        .rejects.toThrow(/its ceremony does not verify, .*the last entry wrote [0-9a-f]{64}, but the zkey given has sha256/);
      expect(await readdir(verdicts), 'only the verified key has a verdict').toEqual(kept);
    }, 10 * 60_000);

    it('the regenerated Verifier.sol accepts the proof on anvil; the committed verifier and a changed signal do not', async () => {
      // Counted locally: ethers caches eth_getTransactionCount for a moment, so a second deploy right
      // after the first could be sent with the first one's nonce ("nonce too low").
      const wallet = new NonceManager(new Wallet(DEV_KEY, provider));
      const deploy = async (baseDir: string, file: string) => {
        const compiled = (await compileSolidity([file], { baseDir, cacheDir: join(dir, 'solc-cache') })).Groth16Verifier!;
        return (await (await new ContractFactory(compiled.abi as never, compiled.bytecode, wallet).deploy()).waitForDeployment()) as Contract;
      };
      const regenerated = await deploy(out, 'Verifier.sol');
      const committed = await deploy(ROOT, 'circuits/build/Verifier.sol');
      const args = toSolidityCallArgs(proof, signals);
      const verify = (verifier: Contract, a: SolidityCallArgs) => verifier.getFunction('verifyProof').staticCall(a.pA, a.pB, a.pC, a.pubSignals) as Promise<boolean>;
      expect(await verify(regenerated, args)).toBe(true);
      expect(await verify(committed, args)).toBe(false);
      const changed = [...args.pubSignals] as SolidityCallArgs['pubSignals'];
      changed[3] += 1n;
      expect(await verify(regenerated, { ...args, pubSignals: changed })).toBe(false);
    });

    it('the regenerated Soroban key data (params.rs) verifies the proof in the Soroban host', async () => {
      const params = await readFile(join(out, 'params.rs'), 'utf8');
      const constant = (name: string) => {
        const found = new RegExp(`pub const ${name}: \\[[^=]+= \\[([\\s\\S]*?)\\];`).exec(params);
        if (!found) throw new Error(`params.rs has no ${name}`);
        return Buffer.from((found[1]!.match(/0x[0-9a-f]{2}/g) ?? []).map((b) => Number.parseInt(b, 16)));
      };
      const key = Buffer.concat(['VK_ALPHA_G1', 'VK_BETA_G2', 'VK_GAMMA_G2', 'VK_DELTA_G2', 'VK_IC'].map(constant));
      // The same bytes the service compares with the contracts' verification_key view.
      expect(key.equals(sorobanKeyBytes(vk))).toBe(true);
      const committedProof = await snarkjs.groth16.fullProve({ ...sampleProofInput().input }, artifacts.wasm, artifacts.zkey);
      const changed = [...signals];
      changed[3] = (BigInt(changed[3]!) + 1n).toString();
      const cases = {
        key: key.toString('hex'),
        cases: [
          { what: 'the ceremony key\'s proof', proof: encodeProof(proof), signals, valid: true },
          { what: 'a changed nullifier', proof: encodeProof(proof), signals: changed, valid: false },
          { what: 'a proof made with the development key', proof: encodeProof(committedProof.proof as Groth16Proof), signals: committedProof.publicSignals, valid: false },
        ],
      };
      const casesFile = join(dir, 'host-cases.json');
      await writeFile(casesFile, JSON.stringify(cases));
      // The same cargo build as contracts/soroban/cargo.test.ts (one selection, features and target
      // directory, this checkout's own): whichever file comes first builds the Soroban test crate,
      // the other reuses it. On a fresh clone that build is minutes of both cores; it used to be done
      // twice, once per target directory.
      const { stdout, stderr } = await timed('Soroban host (cargo test)', () => run('cargo', [...SOROBAN_HOST_TESTS, '--', '--ignored', '--exact', 'ceremony_key::ceremony_key_verifies_its_proofs_in_the_host'], {
        cwd: ROOT, env: { ...process.env, CEREMONY_HOST_CASES: casesFile }, maxBuffer: 64 << 20,
      }));
      expect(stdout + stderr).toMatch(/test ceremony_key::ceremony_key_verifies_its_proofs_in_the_host \.\.\. ok/);
      expect(stdout).toMatch(/test result: ok\. 1 passed/);
    }, 15 * 60_000);
  });
});
