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
  export const zKey: {
    exportSolidityVerifier(zkey: string | Uint8Array, templates: Record<string, string>, logger?: unknown): Promise<string>;
    exportVerificationKey(zkey: string | Uint8Array, logger?: unknown): Promise<object>;
  };
}
