// The part of circomlibjs the devnet uses (its Poseidon contract generator); merges with prover/vendor-types.d.ts.
declare module 'circomlibjs' {
  export const poseidonContract: {
    /** Creation bytecode (0x hex) of a contract computing Poseidon over `nInputs` field elements. */
    createCode(nInputs: number): string;
    /** Its ABI: `poseidon(uint256[n])` and `poseidon(bytes32[n])`. */
    generateABI(nInputs: number): unknown[];
  };
}
