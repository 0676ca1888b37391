import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Contract, ContractFactory, JsonRpcProvider, Wallet } from 'ethers';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { artifacts } from '../../circuits/artifacts.ts';
import { sampleProofInput } from '../../test/support/circuit-vectors.ts';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { compileSolidity } from '../../contracts/evm/compile.ts';
import { expectedPublicSignals, type CircuitInput } from '../proof-input.ts';
import { toSolidityCallArgs } from '../solidity.ts';
import { NativeProver, NativeProverError } from './client.ts';
import { seededRandom as seeded } from '../../test/support/seeded-random.ts';

interface WitnessCalculator { calculateWTNSBin(input: CircuitInput, sanityCheck: boolean): Promise<Uint8Array> }

// anvil's well-known development account 0.
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const binary = inject('nativeProver');

describe('native Groth16 prover (relayer-groth16) against snarkjs and Verifier.sol', () => {
  const vkey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8')) as Record<string, unknown>;
  let prover: NativeProver;
  let witnessCalculator: WitnessCalculator;
  const witness = (input: CircuitInput) => witnessCalculator.calculateWTNSBin(input, true);

  beforeAll(async () => {
    const build = createRequire(import.meta.url)(artifacts.witnessCalculator) as (code: Uint8Array) => Promise<WitnessCalculator>;
    [prover, witnessCalculator] = await Promise.all([
      NativeProver.start({ binary: binary!, zkey: artifacts.zkey, verificationKey: artifacts.verificationKey }), build(readFileSync(artifacts.wasm)),
    ]);
  });
  afterAll(async () => {
    await prover?.close();
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('reads from the committed zkey the verification key snarkjs exported from it', async () => {
    const { vk_alphabeta_12: _precomputed, ...exported } = vkey;
    expect(await prover.verificationKey()).toEqual(exported);
  });

  it('proves the committed test vector; snarkjs verifies the proof with the input public signals', async () => {
    const { input } = sampleProofInput();
    const { proof, publicSignals } = await prover.prove(await witness(input));
    expect(publicSignals).toEqual(expectedPublicSignals(input));
    expect(proof).toMatchObject({ protocol: 'groth16', curve: 'bn128', pi_a: [expect.any(String), expect.any(String), '1'] });
    expect(await snarkjs.groth16.verify(vkey, publicSignals, proof)).toBe(true);
  });

  it('proves deposits at random positions of random trees, each verified by snarkjs', async () => {
    const seed = Number(process.env.PROVER_TEST_SEED ?? Date.now() % 2 ** 31);
    console.log(`random trees: PROVER_TEST_SEED=${seed}`);
    const random = seeded(seed);
    for (let i = 0; i < 4; i++) {
      // Leaf indices across the whole depth-20 range, so every path bit takes both values.
      const index = Math.floor(random() * 2 ** 20);
      const { input } = sampleProofInput({ index, neighbours: Math.floor(random() * 12) });
      const { proof, publicSignals } = await prover.prove(await witness(input));
      expect(publicSignals, `seed ${seed}, index ${index}`).toEqual(expectedPublicSignals(input));
      expect(await snarkjs.groth16.verify(vkey, publicSignals, proof), `seed ${seed}, index ${index}`).toBe(true);
    }
  });

  it('blinds every proof: two proofs of one witness differ and both verify', async () => {
    const w = await witness(sampleProofInput().input);
    const [first, second] = await Promise.all([prover.prove(w), prover.prove(w)]);
    expect(first.proof.pi_a).not.toEqual(second.proof.pi_a);
    expect(await snarkjs.groth16.verify(vkey, second.publicSignals, second.proof)).toBe(true);
  });

  it('answers a malformed or foreign witness with an error and keeps serving', async () => {
    await expect(prover.prove(new Uint8Array([1, 2, 3]))).rejects.toThrow(new NativeProverError("not a circom witness (magic is not 'wtns')"));
    const good = await witness(sampleProofInput().input);
    // Same header, one signal short: the zkey expects 5829.
    const short = new Uint8Array(good.subarray(0, good.length - 32));
    const view = new DataView(short.buffer);
    // wtns: magic, version, count (12 bytes); section 1 (12 + n8, q, count: 40 bytes); section 2 (id, length, values).
    view.setUint32(60, view.getUint32(60, true) - 1, true); // witness count
    view.setBigUint64(68, view.getBigUint64(68, true) - 32n, true); // values section length
    await expect(prover.prove(short)).rejects.toThrow(/witness has 5828 signals, the zkey expects 5829/);
    expect(prover.alive).toBe(true);
    const { publicSignals, proof } = await prover.prove(good);
    expect(await snarkjs.groth16.verify(vkey, publicSignals, proof)).toBe(true);
  });

  describe('verifying with the prepared key', () => {
    const BN254_R = 21888242871839275222246405745257275088548364400416711303968931127479843590961n;

    it('accepts what snarkjs accepts: its own proofs and snarkjs proofs', async () => {
      const { input } = sampleProofInput({ index: 9 });
      const w = await witness(input);
      const native = await prover.prove(w);
      expect((await prover.verify(native.proof, native.publicSignals)).valid).toBe(true);
      const js = await snarkjs.groth16.prove(artifacts.zkey, { type: 'mem', data: w });
      expect((await prover.verify(js.proof, js.publicSignals)).valid).toBe(true);
    });

    it('refuses a bad proof as snarkjs does: a changed public signal, another deposit, swapped points', async () => {
      const a = await prover.prove(await witness(sampleProofInput({ index: 1 }).input));
      const b = await prover.prove(await witness(sampleProofInput({ index: 2 }).input));
      const nullifier = (BigInt(a.publicSignals[3]!) + 1n).toString();
      const bad = [
        { proof: a.proof, publicSignals: [...a.publicSignals.slice(0, 3), nullifier] },
        { proof: a.proof, publicSignals: b.publicSignals },
        { proof: { ...a.proof, pi_a: a.proof.pi_c, pi_c: a.proof.pi_a }, publicSignals: a.publicSignals },
        { proof: { ...a.proof, pi_c: b.proof.pi_c }, publicSignals: a.publicSignals },
      ];
      for (const [i, { proof, publicSignals }] of bad.entries()) {
        expect(await snarkjs.groth16.verify(vkey, publicSignals, proof), `case ${i}`).toBe(false);
        expect((await prover.verify(proof, publicSignals)).valid, `case ${i}`).toBe(false);
      }
    });

    it('refuses a malformed proof with a reason and keeps serving', async () => {
      const { proof, publicSignals } = await prover.prove(await witness(sampleProofInput().input));
      // The same signal plus r is the same value to a pairing; the contracts refuse it, so do we.
      const aliased = [(BigInt(publicSignals[0]!) + BN254_R).toString(), ...publicSignals.slice(1)];
      await expect(prover.verify(proof, aliased)).rejects.toThrow(new NativeProverError('publicSignals[0] is not below the field\'s modulus'));
      await expect(prover.verify({ ...proof, pi_a: [proof.pi_a[0]!, '5', '1'] }, publicSignals)).rejects.toThrow(/pi_a is not on the BN254 G1 curve/);
      await expect(prover.verify(proof, publicSignals.slice(1))).rejects.toThrow(/expected 4 public signals, received 3/);
      expect(prover.alive).toBe(true);
      expect((await prover.verify(proof, publicSignals)).valid).toBe(true);
    });

    it('says whether it holds a key, and a process without one refuses to verify', async () => {
      expect(prover.verifies).toBe(true);
      const keyless = await NativeProver.start({ binary: binary!, zkey: artifacts.zkey });
      try {
        expect(keyless.verifies).toBe(false);
        const { proof, publicSignals } = await prover.prove(await witness(sampleProofInput().input));
        await expect(keyless.verify(proof, publicSignals)).rejects.toThrow(/started without a verification key/);
      } finally {
        await keyless.close();
      }
    });
  });

  it('passes its Rust unit tests (cargo test: the multi-exponentiation against arkworks)', () => {
    const run = spawnSync('cargo', ['test', '--profile', 'prover', '--locked', '--target-dir', 'target', '-p', 'relayer-prover-native'], { encoding: 'utf8', timeout: 600_000 });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/test result: ok\. [1-9]\d* passed; 0 failed/);
  }, 600_000);

  describe('in a real EVM', () => {
    let anvil: AnvilInstance;
    let provider: JsonRpcProvider;
    let verifier: Contract;

    beforeAll(async () => {
      const [compiled, node] = await Promise.all([compileSolidity(['circuits/build/Verifier.sol']), startAnvil({ chainId: 31_338 })]);
      anvil = node;
      provider = new JsonRpcProvider(anvil.rpcUrl, anvil.chainId, { staticNetwork: true });
      const contract = compiled.Groth16Verifier!;
      const factory = new ContractFactory(contract.abi as never, contract.bytecode, new Wallet(DEV_KEY, provider));
      verifier = (await (await factory.deploy()).waitForDeployment()) as Contract;
    });
    afterAll(async () => {
      provider?.destroy();
      await anvil?.stop();
    });

    it('Groth16Verifier.sol accepts native proofs and rejects them with a changed public signal', async () => {
      for (const index of [0, 5, 2 ** 20 - 1]) {
        const { input } = sampleProofInput({ index });
        const { proof, publicSignals } = await prover.prove(await witness(input));
        const args = toSolidityCallArgs(proof, publicSignals);
        const verify = (pubSignals: typeof args.pubSignals) => verifier.getFunction('verifyProof').staticCall(args.pA, args.pB, args.pC, pubSignals) as Promise<boolean>;
        expect(await verify(args.pubSignals), `index ${index}`).toBe(true);
        expect(await verify([args.pubSignals[0], args.pubSignals[1], args.pubSignals[2], args.pubSignals[3] + 1n])).toBe(false);
      }
    });
  });
});
