// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20, IGroth16Verifier} from "./Interfaces.sol";

/// The order every chain agrees on; field order and types match chains/order.ts. Addresses are
/// 32-byte values (EVM: left-padded; Stellar: raw key or contract id), adId is the ad's UUID left-padded.
struct Order {
    bytes32 orderChainToken;
    bytes32 adChainToken;
    /// What the Bridger deposits on the order chain, in the order token's smallest unit.
    uint256 orderAmount;
    /// What the Maker locks and the Bridger receives on the ad chain, in the ad token's smallest unit.
    /// The route prices it from orderAmount (architecture.md "Amounts across chains"); both are hashed.
    uint256 adAmount;
    bytes32 bridger;
    bytes32 orderRecipient;
    bytes32 adId;
    bytes32 adCreator;
    bytes32 adRecipient;
    uint256 salt;
    uint256 orderChainId;
    bytes32 orderPortal;
    uint256 adChainId;
    bytes32 adManager;
    /// Unix seconds. Ad chain: the Bridger's unlock is accepted before it, the Maker's release from it on.
    uint256 lockExpiry;
    /// Unix seconds, at least MIN_REFUND_MARGIN after lockExpiry. Order chain: the Maker's unlock is
    /// accepted before it, the Bridger's refund from it on.
    uint256 refundTime;
}

/// Verification of relayer-signed requests (EIP-712), single-use auth tokens, the order hash and its
/// time limits, Groth16 settlement proofs and token movements: what AdManager and OrderPortal share.
abstract contract RelayerRequests {
    error InvalidSignature();
    error RequestExpired();
    error AuthTokenUsed();
    error NotForThisContract();
    error NotEvmAddress();
    error WrongPayment();
    error TransferFailed();
    error NullifierSpent();
    error InvalidProof();
    error NotAField();
    error ZeroRelayer();
    error InvalidTimes();
    error TooEarly();
    error TooLate();
    error NotAdmin();

    /// The relayer's key changed: `current` signs from now on, `previous` stays accepted while
    /// block.timestamp < previousUntil (the grace period, so requests signed before the switch still execute).
    event RelayerRotated(address indexed previous, address indexed current, uint256 previousUntil);
    /// The admin moved the end of the previous key's grace period (ended early on a compromised key, or extended).
    event PreviousRelayerGraceSet(address indexed previous, uint256 previousUntil);

    /// The Bridger's shortest time to unlock on the ad chain: a lock is refused later than lockExpiry - this.
    uint256 public constant MIN_UNLOCK_WINDOW = 1 hours;
    /// The Maker's shortest time to unlock on the order chain after the Bridger's last chance (lockExpiry).
    uint256 public constant MIN_REFUND_MARGIN = 1 hours;
    /// No order keeps a deposit longer than this: refundTime is at most this far ahead at creation and lock.
    uint256 public constant MAX_ORDER_LIFETIME = 30 days;

    uint256 internal constant FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617;
    uint256 private constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    bytes32 private constant REQUEST_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant ORDER_DOMAIN_TYPEHASH = keccak256("EIP712Domain(string name,string version)");
    bytes32 internal constant ORDER_TYPEHASH = keccak256(
        "Order(bytes32 orderChainToken,bytes32 adChainToken,uint256 orderAmount,uint256 adAmount,bytes32 bridger,bytes32 orderRecipient,bytes32 adId,bytes32 adCreator,bytes32 adRecipient,uint256 salt,uint256 orderChainId,bytes32 orderPortal,uint256 adChainId,bytes32 adManager,uint256 lockExpiry,uint256 refundTime)"
    );
    bytes32 internal constant UNLOCK_TYPEHASH = keccak256(
        "Unlock(bytes32 authToken,uint256 deadline,bytes32 orderHash,uint256 nullifierHash,uint256 targetRoot)"
    );

    /// The address whose signature authorizes every request (the current relayer key).
    address public relayer;
    /// The relayer key before the last rotation: still authorizes requests while
    /// block.timestamp < previousRelayerUntil, never after (zero before any rotation).
    address public previousRelayer;
    /// Unix seconds: end (exclusive) of the previous relayer key's grace period.
    uint256 public previousRelayerUntil;
    /// Who may rotate the relayer key and set its grace period: the deployer.
    address public immutable admin;
    IGroth16Verifier public immutable verifier;
    bytes32 private immutable nameHash;
    bytes32 private immutable versionHash;

    mapping(bytes32 => bool) public authTokenUsed;
    mapping(uint256 => bool) public nullifierSpent;

    constructor(address relayer_, IGroth16Verifier verifier_, string memory name, string memory version) {
        // With a zero relayer, any signature ecrecover rejects (it returns zero) would authorize everything.
        if (relayer_ == address(0)) revert ZeroRelayer();
        relayer = relayer_;
        admin = msg.sender;
        verifier = verifier_;
        nameHash = keccak256(bytes(name));
        versionHash = keccak256(bytes(version));
    }

    /// Key rotation without downtime (docs/security.md "Rotating keys"): `next` becomes the relayer and the
    /// key it replaces stays accepted for `graceSeconds` from now, so requests the service signed with it
    /// before switching keep executing until their deadline. Admin only; refuses the zero address.
    function rotateRelayer(address next, uint256 graceSeconds) external {
        if (msg.sender != admin) revert NotAdmin();
        if (next == address(0)) revert ZeroRelayer();
        address previous = relayer;
        relayer = next;
        previousRelayer = previous;
        previousRelayerUntil = block.timestamp + graceSeconds;
        emit RelayerRotated(previous, next, previousRelayerUntil);
    }

    /// Moves the end of the previous key's grace period: `block.timestamp` or earlier ends it now
    /// (a leaked old key), a later time extends it. Admin only.
    function setPreviousRelayerUntil(uint256 until) external {
        if (msg.sender != admin) revert NotAdmin();
        previousRelayerUntil = until;
        emit PreviousRelayerGraceSet(previousRelayer, until);
    }

    /// Whether `signer` may authorize a request now: the current relayer, or the previous one within its grace.
    function isRelayerSigner(address signer) public view returns (bool) {
        if (signer == address(0)) return false;
        if (signer == relayer) return true;
        return signer == previousRelayer && block.timestamp < previousRelayerUntil;
    }

    /// EIP-712 domain of requests: computed per call so a chain id change can never replay across forks.
    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(REQUEST_DOMAIN_TYPEHASH, nameHash, versionHash, block.chainid, address(this)));
    }

    /// The chain-independent order hash (domain {name, version}); the same on every chain.
    function orderHashOf(Order calldata o) public view returns (bytes32) {
        bytes32 orderDomain = keccak256(abi.encode(ORDER_DOMAIN_TYPEHASH, nameHash, versionHash));
        return keccak256(abi.encodePacked("\x19\x01", orderDomain, keccak256(abi.encode(ORDER_TYPEHASH, o))));
    }

    /// Checks deadline, signer and single use of the auth token; returns the request hash (reqHash).
    function _consume(bytes32 structHash, bytes32 authToken, uint256 deadline, bytes calldata signature)
        internal
        returns (bytes32 reqHash)
    {
        if (block.timestamp > deadline) revert RequestExpired();
        reqHash = keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
        address signer = _recover(reqHash, signature);
        if (!isRelayerSigner(signer)) revert InvalidSignature();
        if (authTokenUsed[authToken]) revert AuthTokenUsed();
        authTokenUsed[authToken] = true;
    }

    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        // Reject the malleable high-s twin of a signature.
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// The order's times as a hash time-lock needs them (devnet/README.md "Timeouts"): the lock
    /// can still leave the Bridger MIN_UNLOCK_WINDOW, the Maker keeps MIN_REFUND_MARGIN after the
    /// Bridger's last chance, and the deposit is not held beyond MAX_ORDER_LIFETIME. Checked at
    /// createOrder and again at lockForOrder (each chain checks what it is about to hold).
    function _checkTimes(Order calldata o) internal view {
        if (
            o.lockExpiry < block.timestamp + MIN_UNLOCK_WINDOW || o.refundTime < o.lockExpiry + MIN_REFUND_MARGIN
                || o.refundTime > block.timestamp + MAX_ORDER_LIFETIME
        ) revert InvalidTimes();
    }

    /// Verifies the settlement proof for (root, orderHash, nullifier) and spends the nullifier.
    function _spendWithProof(bytes32 orderHash, uint256 root, uint256 nullifierHash, bytes calldata proof) internal {
        if (nullifierSpent[nullifierHash]) revert NullifierSpent();
        (uint256[2] memory pA, uint256[2][2] memory pB, uint256[2] memory pC) =
            abi.decode(proof, (uint256[2], uint256[2][2], uint256[2]));
        uint256[4] memory signals =
            [root, uint256(orderHash) >> 128, uint256(orderHash) & type(uint128).max, nullifierHash];
        if (!verifier.verifyProof(pA, pB, pC, signals)) revert InvalidProof();
        nullifierSpent[nullifierHash] = true;
    }

    function _unlockStructHash(
        bytes32 authToken,
        uint256 deadline,
        bytes32 orderHash,
        uint256 nullifierHash,
        uint256 targetRoot
    ) internal pure returns (bytes32) {
        return keccak256(abi.encode(UNLOCK_TYPEHASH, authToken, deadline, orderHash, nullifierHash, targetRoot));
    }

    function _self() internal view returns (bytes32) {
        return _word(address(this));
    }

    function _word(address a) internal pure returns (bytes32) {
        return bytes32(uint256(uint160(a)));
    }

    function _toAddress(bytes32 value) internal pure returns (address) {
        if (uint256(value) >> 160 != 0) revert NotEvmAddress();
        return address(uint160(uint256(value)));
    }

    /// Takes `amount` of `token` from the caller; the zero address means the native coin (msg.value).
    function _pull(address token, uint256 amount) internal {
        if (token == address(0)) {
            if (msg.value != amount) revert WrongPayment();
            return;
        }
        if (msg.value != 0) revert WrongPayment();
        _callToken(token, abi.encodeCall(IERC20.transferFrom, (msg.sender, address(this), amount)));
    }

    function _push(address token, address to, uint256 amount) internal {
        if (amount == 0) return;
        if (token == address(0)) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert TransferFailed();
            return;
        }
        _callToken(token, abi.encodeCall(IERC20.transfer, (to, amount)));
    }

    /// SafeERC20's rule: the call must succeed and return either nothing (tokens that predate the
    /// standard's bool, such as USDT) from an address holding code, or exactly `true`.
    function _callToken(address token, bytes memory data) private {
        (bool ok, bytes memory returned) = token.call(data);
        if (!ok) revert TransferFailed();
        if (returned.length == 0) {
            if (token.code.length == 0) revert TransferFailed();
        } else if (returned.length < 32 || abi.decode(returned, (uint256)) != 1) {
            revert TransferFailed();
        }
    }
}
