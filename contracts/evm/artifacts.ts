import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { poseidonContract } from 'circomlibjs';
import { compileSolidity } from './compile.ts';

/** What a deployment needs of one contract. */
export interface Artifact {
  abi: unknown[];
  bytecode: string;
}

/** Every contract the devnet deploys. `verifier` is absent until circuits/build/Verifier.sol exists. */
export interface DevnetArtifacts {
  poseidon2: Artifact;
  poseidon3: Artifact;
  testErc20: Artifact;
  adManager: Artifact;
  orderPortal: Artifact;
  verifier?: Artifact;
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTRACTS = ['AdManager.sol', 'OrderPortal.sol', 'TestERC20.sol'].map((file) => `contracts/evm/src/${file}`);
/** The Groth16 verifier snarkjs exports from the deposit circuit (committed by the circuit build). */
export const VERIFIER_SOURCE = 'circuits/build/Verifier.sol';

/**
 * Compiles the reference contracts and the circuit's verifier (cached, see compile.ts) and generates
 * the Poseidon contracts with circomlibjs, whose bytecode is the same Poseidon the circuit uses.
 */
export async function loadDevnetArtifacts(): Promise<DevnetArtifacts> {
  const contracts = await compileSolidity(CONTRACTS, { baseDir: REPO_ROOT });
  const pick = (name: string): Artifact => {
    const found = contracts[name];
    if (!found) throw new Error(`compiled output has no contract ${name}`);
    return { abi: found.abi, bytecode: found.bytecode };
  };
  const artifacts: DevnetArtifacts = {
    poseidon2: { abi: poseidonContract.generateABI(2), bytecode: poseidonContract.createCode(2) },
    poseidon3: { abi: poseidonContract.generateABI(3), bytecode: poseidonContract.createCode(3) },
    testErc20: pick('TestERC20'),
    adManager: pick('AdManager'),
    orderPortal: pick('OrderPortal'),
  };
  if (existsSync(path.join(REPO_ROOT, VERIFIER_SOURCE))) {
    const verifier = (await compileSolidity([VERIFIER_SOURCE], { baseDir: REPO_ROOT })).Groth16Verifier;
    if (!verifier) throw new Error(`${VERIFIER_SOURCE} declares no contract Groth16Verifier`);
    artifacts.verifier = { abi: verifier.abi, bytecode: verifier.bytecode };
  }
  return artifacts;
}
