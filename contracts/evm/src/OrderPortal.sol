// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IGroth16Verifier, IPoseidon2, IPoseidon3} from "./Interfaces.sol";
import {PoseidonTree} from "./PoseidonTree.sol";
import {Order, RelayerRequests} from "./RelayerRequests.sol";

/// Reference OrderPortal (order chain): takes the Bridger's deposit under a relayer-signed request,
/// appends `Poseidon3(orderHashHi, orderHashLo, secretCommitment)` to its Poseidon tree, and releases
/// the deposit to the order-chain recipient (the Maker) with the trade's Groth16 proof against one
/// of its recent roots, before the order's refundTime; from refundTime on, a deposit never unlocked
/// goes back to the Bridger (refund), and then it can no longer be unlocked.
contract OrderPortal is RelayerRequests, PoseidonTree {
    error OrderMismatch();
    error WrongOrderState();
    error UnknownRoot();

    bytes32 private constant CREATE_ORDER_TYPEHASH =
        keccak256("CreateOrder(bytes32 authToken,uint256 deadline,bytes32 orderHash,uint256 secretCommitment)");

    enum OrderState {
        None,
        Deposited,
        Unlocked,
        Refunded
    }

    IPoseidon3 public immutable poseidon3;
    mapping(bytes32 => OrderState) public orders;

    /// One per deposit: what the service checks on confirm and mirrors into its off-chain tree.
    event OrderCreated(
        bytes32 indexed orderHash,
        bytes32 indexed reqHash,
        uint256 indexed leafIndex,
        uint256 leaf,
        uint256 secretCommitment,
        uint256 root
    );
    event OrderUnlocked(
        bytes32 indexed orderHash, bytes32 indexed reqHash, uint256 indexed nullifierHash, address recipient, uint256 amount
    );
    event OrderRefunded(bytes32 indexed orderHash, address recipient, uint256 amount);

    constructor(
        address relayer_,
        IGroth16Verifier verifier_,
        IPoseidon2 poseidon2_,
        IPoseidon3 poseidon3_,
        string memory name,
        string memory version
    ) RelayerRequests(relayer_, verifier_, name, version) PoseidonTree(poseidon2_) {
        poseidon3 = poseidon3_;
    }

    /// The Bridger's deposit of `o.orderAmount` of the order-chain token.
    function createOrder(
        Order calldata o,
        uint256 secretCommitment,
        bytes32 authToken,
        uint256 deadline,
        bytes calldata signature
    ) external payable {
        bytes32 orderHash = orderHashOf(o);
        bytes32 reqHash = _consume(
            keccak256(abi.encode(CREATE_ORDER_TYPEHASH, authToken, deadline, orderHash, secretCommitment)),
            authToken,
            deadline,
            signature
        );
        if (o.orderChainId != block.chainid || o.orderPortal != _self()) revert NotForThisContract();
        if (o.bridger != _word(msg.sender)) revert OrderMismatch();
        if (secretCommitment >= FIELD) revert NotAField();
        _checkTimes(o);
        if (orders[orderHash] != OrderState.None) revert WrongOrderState();
        orders[orderHash] = OrderState.Deposited;
        uint256 leaf =
            poseidon3.poseidon([uint256(orderHash) >> 128, uint256(orderHash) & type(uint128).max, secretCommitment]);
        (uint256 leafIndex, uint256 root) = _insert(leaf);
        _pull(_toAddress(o.orderChainToken), o.orderAmount);
        emit OrderCreated(orderHash, reqHash, leafIndex, leaf, secretCommitment, root);
    }

    /// Releases a deposit to its order-chain recipient (the Maker), whoever submits it.
    function unlock(
        Order calldata o,
        uint256 nullifierHash,
        uint256 targetRoot,
        bytes calldata proof,
        bytes32 authToken,
        uint256 deadline,
        bytes calldata signature
    ) external {
        bytes32 orderHash = orderHashOf(o);
        bytes32 reqHash = _consume(
            _unlockStructHash(authToken, deadline, orderHash, nullifierHash, targetRoot), authToken, deadline, signature
        );
        if (orders[orderHash] != OrderState.Deposited) revert WrongOrderState();
        // Strictly before refundTime: at refundTime itself only the refund is possible, never both.
        if (block.timestamp >= o.refundTime) revert TooLate();
        if (!isKnownRoot(targetRoot)) revert UnknownRoot();
        _spendWithProof(orderHash, targetRoot, nullifierHash, proof);
        orders[orderHash] = OrderState.Unlocked;
        _release(o, orderHash, reqHash, nullifierHash);
    }

    /// From the order's refundTime on, returns a deposit that was never unlocked to the Bridger. Needs
    /// no relayer signature (the way out when the service is gone); anyone may submit it, the
    /// Bridger is paid.
    function refund(Order calldata o) external {
        bytes32 orderHash = orderHashOf(o);
        if (orders[orderHash] != OrderState.Deposited) revert WrongOrderState();
        if (block.timestamp < o.refundTime) revert TooEarly();
        orders[orderHash] = OrderState.Refunded;
        address recipient = _toAddress(o.bridger);
        _push(_toAddress(o.orderChainToken), recipient, o.orderAmount);
        emit OrderRefunded(orderHash, recipient, o.orderAmount);
    }

    function _release(Order calldata o, bytes32 orderHash, bytes32 reqHash, uint256 nullifierHash) private {
        address recipient = _toAddress(o.orderRecipient);
        _push(_toAddress(o.orderChainToken), recipient, o.orderAmount);
        emit OrderUnlocked(orderHash, reqHash, nullifierHash, recipient, o.orderAmount);
    }
}
