import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifacts, type BuildManifest } from './artifacts.ts';
import { checkChain, readTranscript } from './ceremony/transcript.ts';
import { compileCircuit, verifierTemplatePath, type CompiledCircuit } from './compile.ts';
import { verificationKeySha256 } from './verification-key.ts';

const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

describe('committed circuit artifacts', () => {
  let work: string;
  let fresh: CompiledCircuit;
  let manifest: BuildManifest;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'circuit-check-'));
    fresh = await compileCircuit(work);
    manifest = JSON.parse(await readFile(artifacts.manifest, 'utf8')) as BuildManifest;
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('match a fresh compile of the circuit source (r1cs, wasm, witness calculator)', async () => {
    expect(await sha256(fresh.r1cs)).toBe(await sha256(artifacts.r1cs));
    expect(await sha256(fresh.wasm)).toBe(await sha256(artifacts.wasm));
    expect(await sha256(fresh.witnessCalculator)).toBe(await sha256(artifacts.witnessCalculator));
  });

  it('match the hashes recorded in manifest.json', async () => {
    for (const file of [artifacts.r1cs, artifacts.wasm, artifacts.witnessCalculator, artifacts.zkey, artifacts.verificationKey, artifacts.verifierSol]) {
      expect(manifest.sha256[basename(file)], basename(file)).toBe(await sha256(file));
    }
  });

  it('have a proving key for this constraint system, whose verification key and verifier are the committed ones', async () => {
    const info = await snarkjs.r1cs.info(artifacts.r1cs);
    expect(info.nPubInputs).toBe(4);
    expect(info.nOutputs).toBe(0);
    expect(manifest.constraints).toBe(info.nConstraints);
    const vkey = await snarkjs.zKey.exportVerificationKey(artifacts.zkey);
    expect(vkey).toEqual(JSON.parse(await readFile(artifacts.verificationKey, 'utf8')));
    expect((vkey as { nPublic: number }).nPublic).toBe(4);
    const template = await readFile(verifierTemplatePath(), 'utf8');
    expect(await snarkjs.zKey.exportSolidityVerifier(artifacts.zkey, { groth16: template })).toBe(await readFile(artifacts.verifierSol, 'utf8'));
  });

  it('record in manifest.json what ceremony made the key, with the hash of the verification key the zkey holds', async () => {
    // The committed key is the development one: production refuses it (prover/proving-key-trust.ts).
    // A key from `npm run ceremony` carries its transcript, which must verify (circuits/README.md).
    const vkey = await snarkjs.zKey.exportVerificationKey(artifacts.zkey);
    expect(manifest.ceremony.vkSha256).toBe(verificationKeySha256(vkey));
    expect(manifest.ceremony.vkSha256).toBe(await sha256(artifacts.verificationKey));
    if (manifest.ceremony.kind === 'development') {
      expect(existsSync(artifacts.transcript)).toBe(false);
    } else {
      const transcript = await readTranscript(artifacts.transcript);
      expect(manifest.sha256[basename(artifacts.transcript)]).toBe(await sha256(artifacts.transcript));
      expect(manifest.ceremony.participants.map((p) => p.name)).toEqual(transcript.entries.filter((e) => e.step === 'contribution').map((e) => e.name));
      expect(() => checkChain(transcript, manifest.sha256[basename(artifacts.zkey)]!)).not.toThrow();
    }
  });
});
