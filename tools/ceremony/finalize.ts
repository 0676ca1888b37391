import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import * as snarkjs from 'snarkjs';
import { artifacts, type BuildManifest } from '../../circuits/artifacts.ts';
import { CeremonyError, readTranscript, sha256File, writeTranscript } from '../../circuits/ceremony/transcript.ts';
import { verifyCeremony } from '../../circuits/ceremony/zkey-check.ts';
import { BUILD_DIR, CIRCUIT_NAME, circomVersion, verifierTemplatePath } from '../../circuits/compile.ts';
import { verificationKeySha256, verificationKeyText } from '../../circuits/verification-key.ts';
import { PARAMS_RS, renderParams } from '../../contracts/soroban/codegen.ts';

export interface FinalizeOptions {
  r1cs: string;
  ptau: string;
  /** The zkey the beacon wrote. */
  zkey: string;
  /**
   * The ceremony's first zkey (pinned by the transcript): verify from it instead of from the r1cs.
   * Only right after `verify --final` of the same zkey, which checked that file against the r1cs.
   */
  init?: string;
  transcript: string;
  /** Where the build goes: circuits/build by default. */
  outDir?: string;
  /** Where the Soroban contracts' key data goes: contracts/soroban/shared/src/params.rs by default. */
  sorobanParams?: string;
  /** Distinct contributors needed before the beacon (CEREMONY_MIN_CONTRIBUTORS, default 2). */
  minContributors?: number;
}

export interface Finalized {
  manifest: BuildManifest;
  files: { zkey: string; verificationKey: string; verifierSol: string; sorobanParams: string; manifest: string; transcript: string };
}

/**
 * `finalize`: verifies the whole ceremony (which must be closed by its beacon after enough distinct
 * contributors, each changing the key; from the r1cs, or
 * from the pinned init zkey with `init`), then writes the build from its zkey: the zkey as deposit_final.zkey, verification_key.json, the Solidity verifier
 * (Verifier.sol, snarkjs's template), the Soroban contracts' key data (params.rs, through
 * contracts/soroban/codegen.ts), the transcript beside them and manifest.json with the ceremony's
 * facts (kind "multi-party", participants, beacon, vk sha256, phase-1 hash) and every file's sha256.
 * The r1cs, wasm and witness calculator are copied from circuits/build when the build goes elsewhere.
 */
export async function finalize(options: FinalizeOptions): Promise<Finalized> {
  const outDir = resolve(options.outDir ?? BUILD_DIR);
  const transcript = await readTranscript(options.transcript);
  await verifyCeremony({ r1cs: options.r1cs, ptau: options.ptau, zkey: options.zkey, transcript, requireBeacon: true, minContributors: options.minContributors, init: options.init });
  await mkdir(outDir, { recursive: true });
  const at = (file: string) => join(outDir, basename(file));
  const files = {
    zkey: at(artifacts.zkey),
    verificationKey: at(artifacts.verificationKey),
    verifierSol: at(artifacts.verifierSol),
    sorobanParams: options.sorobanParams ?? PARAMS_RS,
    manifest: at(artifacts.manifest),
    transcript: at(artifacts.transcript),
  };
  if (resolve(options.zkey) !== files.zkey) await copyFile(options.zkey, files.zkey);
  if (outDir !== resolve(BUILD_DIR)) {
    for (const file of [artifacts.r1cs, artifacts.wasm, artifacts.witnessCalculator]) await copyFile(file, at(file));
  }
  if ((await sha256File(at(artifacts.r1cs))) !== transcript.r1csSha256) throw new CeremonyError(`${at(artifacts.r1cs)} is not the r1cs the ceremony was for`);

  const vk = await snarkjs.zKey.exportVerificationKey(files.zkey);
  await writeFile(files.verificationKey, verificationKeyText(vk));
  const template = await readFile(verifierTemplatePath(), 'utf8');
  await writeFile(files.verifierSol, await snarkjs.zKey.exportSolidityVerifier(files.zkey, { groth16: template }));
  await writeFile(files.sorobanParams, renderParams(files.verificationKey));
  if (resolve(options.transcript) !== files.transcript) await writeTranscript(files.transcript, transcript);

  const info = await snarkjs.r1cs.info(at(artifacts.r1cs));
  const contributions = transcript.entries.filter((entry) => entry.step === 'contribution');
  const closing = transcript.entries.at(-1)!;
  const manifest: BuildManifest = {
    circuit: `${CIRCUIT_NAME}.circom`,
    circom: `circom ${await circomVersion()} (npm circom2), --O2`,
    constraints: info.nConstraints,
    publicInputs: info.nPubInputs,
    ptauPower: transcript.phase1.power,
    sha256: {},
    ceremony: {
      kind: 'multi-party',
      participants: contributions.map((entry) => ({ name: entry.name, contributionHash: entry.contributionHash! })),
      beacon: { ...closing.beacon!, contributionHash: closing.contributionHash! },
      vkSha256: verificationKeySha256(vk),
      phase1: transcript.phase1,
      transcript: basename(files.transcript),
    },
  };
  for (const file of [artifacts.r1cs, artifacts.wasm, artifacts.witnessCalculator, artifacts.zkey, artifacts.verificationKey, artifacts.verifierSol, artifacts.transcript]) {
    manifest.sha256[basename(file)] = await sha256File(at(file));
  }
  await writeFile(files.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  return { manifest, files };
}
