/** The proof queue is full (`PROVER_QUEUE_MAX` waiting): retry later; nothing was started. */
export class ProverBusyError extends Error {
  constructor(readonly queueMax: number) {
    super(`prover busy: ${queueMax} proofs already waiting`);
    this.name = 'ProverBusyError';
  }
}

/** The pool is closing or closed; the proof was not (or will not be) produced. */
export class ProverClosedError extends Error {
  constructor(message = 'prover pool is closed') {
    super(message);
    this.name = 'ProverClosedError';
  }
}

/**
 * The circuit rejected the input at witness time: the path does not lead from this order's leaf
 * to the root, the nullifier does not belong to the secret, or a value is malformed. Retrying the
 * same input cannot succeed.
 */
export class InvalidProofInputError extends Error {
  constructor(detail: string) {
    super(`circuit rejected the input: ${detail}`);
    this.name = 'InvalidProofInputError';
  }
}

/** A produced proof failed verification: a broken artifact set (zkey and verification key disagree), never a user error. */
export class ProofVerificationError extends Error {
  constructor(detail: string) {
    super(`generated proof failed verification: ${detail}`);
    this.name = 'ProofVerificationError';
  }
}

/** `PROVER_BACKEND=native` was asked for but the native prover binary is not built (`npm run build:native`). */
export class NativeProverUnavailableError extends Error {
  constructor(readonly binary: string) {
    super(`PROVER_BACKEND is native but the native prover is not built (${binary} is missing): run npm run build:native, which needs cargo`);
    this.name = 'NativeProverUnavailableError';
  }
}
