export { MerkleTreeStore, type LeafEntry, type MerklePath, type TreeKey, type TreeState } from './store.ts';
export { MerkleLeafConflictError, MerkleLeafNotFoundError } from './errors.ts';
