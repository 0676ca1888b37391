import { readFileSync } from 'node:fs';
import { Contract, ContractFactory, JsonRpcProvider, Wallet } from 'ethers';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSolidity } from '../contracts/evm/compile.ts';
import { toSolidityCallArgs, type SolidityCallArgs } from '../prover/solidity.ts';
import { startAnvil, type AnvilInstance } from '../devnet/anvil.ts';
import { artifacts } from './artifacts.ts';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';

// anvil's well-known development account 0.
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

describe('Groth16Verifier.sol (circuits/build/Verifier.sol) in a real EVM', () => {
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let verifier: Contract;
  let args: SolidityCallArgs;

  beforeAll(async () => {
    const [compiled, node, proved] = await Promise.all([
      compileSolidity(['circuits/build/Verifier.sol']),
      startAnvil({ chainId: 31_338 }),
      snarkjs.groth16.fullProve({ ...sampleProofInput().input }, artifacts.wasm, { type: 'mem', data: new Uint8Array(readFileSync(artifacts.zkey)) }),
    ]);
    anvil = node;
    provider = new JsonRpcProvider(anvil.rpcUrl, anvil.chainId, { staticNetwork: true });
    const contract = compiled.Groth16Verifier!;
    const factory = new ContractFactory(contract.abi as never, contract.bytecode, new Wallet(DEV_KEY, provider));
    verifier = (await (await factory.deploy()).waitForDeployment()) as Contract;
    args = toSolidityCallArgs(proved.proof, proved.publicSignals);
  });
  afterAll(async () => {
    provider?.destroy();
    await anvil?.stop();
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  const verify = (a: SolidityCallArgs) => verifier.getFunction('verifyProof').staticCall(a.pA, a.pB, a.pC, a.pubSignals) as Promise<boolean>;

  it('accepts the proof snarkjs produced', async () => {
    expect(await verify(args)).toBe(true);
  });

  it.each([0, 1, 2, 3])('rejects it when public signal %i changes', async (position) => {
    const pubSignals = [...args.pubSignals] as SolidityCallArgs['pubSignals'];
    pubSignals[position] = pubSignals[position]! + 1n;
    expect(await verify({ ...args, pubSignals })).toBe(false);
  });

  it('rejects a tampered proof point and an unswapped B point', async () => {
    expect(await verify({ ...args, pC: [args.pA[0], args.pA[1]] })).toBe(false);
    const unswapped: SolidityCallArgs['pB'] = [[args.pB[0][1], args.pB[0][0]], [args.pB[1][1], args.pB[1][0]]];
    expect(await verify({ ...args, pB: unswapped })).toBe(false);
  });
});
