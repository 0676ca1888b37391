export { TREE_DEPTH, joinOrderHash, leafOf, nullifierHashOf, randomSecret, secretCommitment, splitOrderHash, zeroHashes, type OrderHashParts } from './commitments.ts';
export { FIELD_MODULUS, FieldElementError, assertField, parseField, toDecimal, toHex32 } from './field.ts';
export { poseidon, poseidon2 } from './poseidon.ts';
export { PUBLIC_SIGNAL_COUNT, encodeProof, toSolidityCallArgs, type Groth16Proof, type SolidityCallArgs } from './solidity.ts';
export { buildProofInput, expectedPublicSignals, type CircuitInput, type InclusionPath } from './proof-input.ts';
export { ProverPool, type ProofResult, type ProverPoolOptions } from './pool.ts';
export { InvalidProofInputError, ProofVerificationError, ProverBusyError, ProverClosedError } from './errors.ts';
export { proverMetrics, type ProverMetrics } from './metrics.ts';
export * from './merkle/index.ts';
