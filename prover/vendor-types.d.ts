// Minimal typings for the untyped zk packages, covering only what prover/ and circuits/ call.

declare module 'circomlibjs' {
  interface WasmField {
    toObject(element: Uint8Array): bigint;
    e(value: bigint | string | number): Uint8Array;
  }
  export interface CircomlibPoseidon {
    (inputs: Array<bigint | number | string>): Uint8Array;
    F: WasmField;
  }
  export function buildPoseidon(): Promise<CircomlibPoseidon>;
}

declare module 'snarkjs' {
  import type { Groth16Proof } from './solidity.ts';
  export type SignalValue = string | bigint | number | Array<string | bigint | number>;
  export const groth16: {
    fullProve(
      input: Record<string, SignalValue>,
      wasm: string | Uint8Array | { type: 'mem'; data: Uint8Array },
      zkey: string | Uint8Array | { type: 'mem'; data: Uint8Array },
      logger?: unknown,
      wtnsCalcOptions?: unknown,
      proverOptions?: { singleThread?: boolean },
    ): Promise<{ proof: Groth16Proof; publicSignals: string[] }>;
    prove(
      zkey: string | Uint8Array | { type: 'mem'; data: Uint8Array },
      witness: string | Uint8Array | { type: 'mem'; data: Uint8Array },
      logger?: unknown,
      proverOptions?: { singleThread?: boolean },
    ): Promise<{ proof: Groth16Proof; publicSignals: string[] }>;
    verify(vkey: object, publicSignals: readonly string[], proof: Groth16Proof, logger?: unknown): Promise<boolean>;
  };
  export interface Curve { terminate(): Promise<void> }
  export const curves: {
    getCurveFromName(name: string, options?: { singleThread?: boolean }): Promise<Curve>;
  };
  export const powersOfTau: {
    newAccumulator(curve: Curve, power: number, file: string, logger?: unknown): Promise<unknown>;
    contribute(oldFile: string, newFile: string, name: string, entropy: string, logger?: unknown): Promise<unknown>;
    beacon(oldFile: string, newFile: string, name: string, beaconHash: string, numIterationsExp: number, logger?: unknown): Promise<unknown>;
    preparePhase2(oldFile: string, newFile: string, logger?: unknown): Promise<unknown>;
    /** snarkjs `powersoftau verify`: every contribution, the beacon and the prepared sections. */
    verify(file: string, logger?: unknown): Promise<boolean>;
  };
  export const zKey: {
    newZKey(r1cs: string, ptau: string, zkey: string, logger?: unknown): Promise<unknown>;
    contribute(oldZkey: string, newZkey: string, name: string, entropy: string, logger?: unknown): Promise<unknown>;
    beacon(oldZkey: string, newZkey: string, name: string, beaconHash: string, numIterationsExp: number, logger?: unknown): Promise<unknown>;
    exportSolidityVerifier(zkey: string | Uint8Array, templates: Record<string, string>, logger?: unknown): Promise<string>;
    exportVerificationKey(zkey: string | Uint8Array, logger?: unknown): Promise<object>;
    /** `zkey verify`: true when the zkey follows from r1cs and phase 1 through valid contributions (reported on `logger.info`). */
    verifyFromR1cs(r1cs: string, ptau: string, zkey: string, logger?: unknown): Promise<boolean>;
    /** `zkey verify` against the ceremony's first zkey instead of the r1cs (cheaper: no new zkey is computed). */
    verifyFromInit(initZkey: string, ptau: string, zkey: string, logger?: unknown): Promise<boolean>;
  };
  export const r1cs: {
    info(file: string, logger?: unknown): Promise<{ nConstraints: number; nPrvInputs: number; nPubInputs: number; nOutputs: number; nVars: number }>;
  };
  export const wtns: {
    calculate(input: Record<string, SignalValue>, wasm: string, wtnsFile: string | { type: 'mem'; data?: Uint8Array }): Promise<void>;
    check(r1cs: string, wtnsFile: string, logger?: unknown): Promise<boolean>;
  };
}
