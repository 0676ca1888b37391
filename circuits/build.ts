/**
 * `npm run circuits:build`: rebuilds every committed artifact under circuits/build/ from
 * circuits/deposit.circom. Compile (--O2), a fresh local powers of tau of the smallest power
 * that fits, one random phase-2 contribution, then export verification key and Solidity verifier.
 *
 * This is a DEVELOPMENT ceremony: the toxic waste is only as secret as this machine. Production
 * replaces it as circuits/README.md describes. Rebuilding changes the zkey, the verification key
 * and Verifier.sol (new randomness), so the contracts must be redeployed with the new verifier.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as snarkjs from 'snarkjs';
import { artifacts, type BuildManifest } from './artifacts.ts';
import { BUILD_DIR, CIRCUIT_NAME, circomVersion, compileCircuit, verifierTemplatePath } from './compile.ts';
import { verificationKeySha256, verificationKeyText } from './verification-key.ts';

const step = async <T>(label: string, run: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  const result = await run();
  console.log(`${label.padEnd(40)} ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
};
const entropy = () => randomBytes(32).toString('hex');
const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

/**
 * The phase-1 file: $CIRCUITS_PTAU when given (e.g. a perpetual powers of tau download), else a
 * locally generated one kept in circuits/.cache/ (ignored by git). Phase 1 does not depend on
 * the circuit, and preparing it is the slow step (minutes), so later rebuilds reuse it.
 */
async function phase1(power: number): Promise<string> {
  if (process.env.CIRCUITS_PTAU) {
    console.log(`phase 1: using ${process.env.CIRCUITS_PTAU}`);
    return process.env.CIRCUITS_PTAU;
  }
  const cacheDir = join(BUILD_DIR, '..', '.cache');
  const cached = join(cacheDir, `pot${power}_final.ptau`);
  if (await stat(cached).then(() => true, () => false)) {
    console.log(`phase 1: reusing ${cached}`);
    return cached;
  }
  await mkdir(cacheDir, { recursive: true });
  const ptau0 = join(work, 'pot_0000.ptau');
  const ptau1 = join(work, 'pot_0001.ptau');
  await step(`powers of tau: new (2^${power})`, () => snarkjs.powersOfTau.newAccumulator(curve, power, ptau0));
  await step('powers of tau: contribution', () => snarkjs.powersOfTau.contribute(ptau0, ptau1, 'dev phase 1', entropy()));
  await step('powers of tau: prepare phase 2', () => snarkjs.powersOfTau.preparePhase2(ptau1, `${cached}.tmp`));
  await rename(`${cached}.tmp`, cached);
  return cached;
}

const work = await mkdtemp(join(tmpdir(), 'circuits-build-'));
const curve = await snarkjs.curves.getCurveFromName('bn128');
try {
  const compiled = await step('compile (circom2 --O2)', () => compileCircuit(work));
  const info = await snarkjs.r1cs.info(compiled.r1cs);
  // Groth16's evaluation domain must hold every constraint plus one per public input, plus one.
  const power = Math.max(8, Math.ceil(Math.log2(info.nConstraints + info.nPubInputs + info.nOutputs + 1)));
  console.log(`constraints ${info.nConstraints}, public inputs ${info.nPubInputs}, outputs ${info.nOutputs}: ptau power ${power}`);

  const ptauFinal = await phase1(power);

  const zkey0 = join(work, `${CIRCUIT_NAME}_0000.zkey`);
  await step('phase 2: new zkey', () => snarkjs.zKey.newZKey(compiled.r1cs, ptauFinal, zkey0));
  const zkey1 = join(work, `${CIRCUIT_NAME}_0001.zkey`);
  await step('phase 2: contribution', () => snarkjs.zKey.contribute(zkey0, zkey1, 'dev phase 2', entropy()));

  await mkdir(BUILD_DIR, { recursive: true });
  await copyFile(zkey1, artifacts.zkey);
  await copyFile(compiled.r1cs, artifacts.r1cs);
  await copyFile(compiled.wasm, artifacts.wasm);
  await copyFile(compiled.witnessCalculator, artifacts.witnessCalculator);

  const vkey = await step('export verification key', () => snarkjs.zKey.exportVerificationKey(artifacts.zkey));
  await writeFile(artifacts.verificationKey, verificationKeyText(vkey));
  const template = await readFile(verifierTemplatePath(), 'utf8');
  const solidity = await step('export Solidity verifier', () => snarkjs.zKey.exportSolidityVerifier(artifacts.zkey, { groth16: template }));
  await writeFile(artifacts.verifierSol, solidity);

  const manifest: BuildManifest = {
    circuit: `${CIRCUIT_NAME}.circom`,
    circom: `circom ${await circomVersion()} (npm circom2), --O2`,
    constraints: info.nConstraints,
    publicInputs: info.nPubInputs,
    ptauPower: power,
    sha256: {},
    ceremony: {
      kind: 'development',
      description: 'one local phase-1 and one local phase-2 contribution (npm run circuits:build): whoever ran it can forge proofs; production refuses it',
      vkSha256: verificationKeySha256(vkey),
    },
  };
  for (const file of [artifacts.r1cs, artifacts.wasm, artifacts.witnessCalculator, artifacts.zkey, artifacts.verificationKey, artifacts.verifierSol]) {
    manifest.sha256[basename(file)] = await sha256(file);
  }
  await writeFile(artifacts.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`artifacts written to ${BUILD_DIR}`);
} finally {
  await rm(work, { recursive: true, force: true });
  // The multi-threaded curve owns worker threads: without this the process never exits.
  await curve.terminate();
}
