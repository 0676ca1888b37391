// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The part of ERC-20 the contracts use.
interface IERC20 {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function balanceOf(address who) external view returns (uint256);
}

/// circomlibjs `poseidonContract.createCode(2)`: Poseidon over two field elements.
interface IPoseidon2 {
    function poseidon(uint256[2] calldata inputs) external pure returns (uint256);
}

/// circomlibjs `poseidonContract.createCode(3)`: Poseidon over three field elements.
interface IPoseidon3 {
    function poseidon(uint256[3] calldata inputs) external pure returns (uint256);
}

/// snarkjs-exported verifier of the deposit circuit (circuits/build/Verifier.sol).
/// Public signals: [root, orderHashHi, orderHashLo, nullifierHash].
interface IGroth16Verifier {
    function verifyProof(
        uint256[2] calldata pA,
        uint256[2][2] calldata pB,
        uint256[2] calldata pC,
        uint256[4] calldata pubSignals
    ) external view returns (bool);
}
