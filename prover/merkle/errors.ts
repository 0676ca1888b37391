/** Raised when a different leaf is inserted at an index that already holds one: the mirror disagrees with the chain. */
export class MerkleLeafConflictError extends Error {
  constructor(
    readonly index: number,
    readonly existing: bigint,
    readonly attempted: bigint,
  ) {
    super(`leaf index ${index} already holds ${existing}, refusing ${attempted}`);
    this.name = 'MerkleLeafConflictError';
  }
}

/** Raised for a path request on an index that holds no leaf. */
export class MerkleLeafNotFoundError extends Error {
  constructor(readonly index: number) {
    super(`no leaf at index ${index}`);
    this.name = 'MerkleLeafNotFoundError';
  }
}
