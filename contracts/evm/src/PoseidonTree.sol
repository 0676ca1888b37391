// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IPoseidon2} from "./Interfaces.sol";

/// Incremental binary Poseidon tree of depth 20 (zero leaves, leaves in index order), the layout the
/// deposit circuit proves against: zeros[0] = 0, zeros[i+1] = H(zeros[i], zeros[i]), node = H(left, right).
/// Keeps the filled left subtrees and the last ROOT_HISTORY roots, so a proof made against a recent
/// root stays valid while new deposits arrive.
abstract contract PoseidonTree {
    error TreeFull();

    uint256 public constant DEPTH = 20;
    uint256 public constant ROOT_HISTORY = 100;

    IPoseidon2 public immutable poseidon2;
    uint256[21] private zeros;
    uint256[20] private filledSubtrees;
    uint256[100] private roots;
    uint256 private currentRootIndex;
    /// Index the next leaf gets; equals the number of leaves.
    uint256 public nextLeafIndex;

    constructor(IPoseidon2 poseidon2_) {
        poseidon2 = poseidon2_;
        uint256 z = 0;
        for (uint256 i = 0; i < DEPTH; i++) {
            zeros[i] = z;
            filledSubtrees[i] = z;
            z = poseidon2_.poseidon([z, z]);
        }
        zeros[DEPTH] = z;
        roots[0] = z;
    }

    /// Appends a leaf; returns its index and the new root.
    function _insert(uint256 leaf) internal returns (uint256 index, uint256 root) {
        index = nextLeafIndex;
        if (index >= 1 << DEPTH) revert TreeFull();
        uint256 current = leaf;
        uint256 position = index;
        for (uint256 level = 0; level < DEPTH; level++) {
            if (position & 1 == 0) {
                filledSubtrees[level] = current;
                current = poseidon2.poseidon([current, zeros[level]]);
            } else {
                current = poseidon2.poseidon([filledSubtrees[level], current]);
            }
            position >>= 1;
        }
        root = current;
        currentRootIndex = (currentRootIndex + 1) % ROOT_HISTORY;
        roots[currentRootIndex] = root;
        nextLeafIndex = index + 1;
    }

    /// The root after the latest insertion (the empty tree's root before any).
    function currentRoot() public view returns (uint256) {
        return roots[currentRootIndex];
    }

    /// True when `root` is one of the last ROOT_HISTORY roots.
    function isKnownRoot(uint256 root) public view returns (bool) {
        if (root == 0) return false;
        for (uint256 i = 0; i < ROOT_HISTORY; i++) {
            if (roots[i] == root) return true;
        }
        return false;
    }
}
