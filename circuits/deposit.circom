pragma circom 2.1.0;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";

// Proves that a deposit for one order sits in the OrderPortal's Merkle tree under `root`, and
// binds the proof to that order and to the trade's single nullifier, without revealing the
// secret or the leaf's position. Layout: circuits/README.md; TS mirror: prover/commitments.ts.
template DepositInclusion(depth) {
    // Public, in this order (snarkjs's publicSignals and the verifier's _pubSignals).
    signal input root;
    signal input orderHashHi;
    signal input orderHashLo;
    signal input nullifierHash;
    // Private.
    signal input secret;
    signal input pathElements[depth];
    signal input pathIndices[depth];

    // Each half of the 256-bit order hash must be below 2^128, so (hi, lo) names exactly one
    // 256-bit hash: without this a prover could shift value between the halves modulo p.
    component hiBits = Num2Bits(128);
    hiBits.in <== orderHashHi;
    component loBits = Num2Bits(128);
    loBits.in <== orderHashLo;

    component commitment = Poseidon(1);
    commitment.inputs[0] <== secret;

    component leaf = Poseidon(3);
    leaf.inputs[0] <== orderHashHi;
    leaf.inputs[1] <== orderHashLo;
    leaf.inputs[2] <== commitment.out;

    component nullifier = Poseidon(2);
    nullifier.inputs[0] <== secret;
    nullifier.inputs[1] <== 1;
    nullifierHash === nullifier.out;

    // Walk from the leaf to the root. pathIndices[i] = bit i of the leaf index: 1 when the
    // running node is the right child at level i.
    component hashers[depth];
    signal nodes[depth + 1];
    signal left[depth];
    signal right[depth];
    nodes[0] <== leaf.out;
    for (var i = 0; i < depth; i++) {
        pathIndices[i] * (1 - pathIndices[i]) === 0;
        left[i] <== nodes[i] + pathIndices[i] * (pathElements[i] - nodes[i]);
        right[i] <== pathElements[i] + nodes[i] - left[i];
        hashers[i] = Poseidon(2);
        hashers[i].inputs[0] <== left[i];
        hashers[i].inputs[1] <== right[i];
        nodes[i + 1] <== hashers[i].out;
    }
    root === nodes[depth];
}

component main {public [root, orderHashHi, orderHashLo, nullifierHash]} = DepositInclusion(20);
