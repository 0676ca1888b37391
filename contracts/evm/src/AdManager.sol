// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IGroth16Verifier} from "./Interfaces.sol";
import {Order, RelayerRequests} from "./RelayerRequests.sol";

/// Reference AdManager (ad chain): Makers' liquidity pools. Every call carries a request the relayer
/// signed (EIP-712, chains/README.md); orders are locked against an ad and released to the Bridger
/// with the trade's Groth16 proof against the order chain's root, which the relayer's unlock
/// signature attests, before the order's lockExpiry; from lockExpiry on, a lock never unlocked goes
/// back to the Maker's ad (releaseLock), and then it can no longer be unlocked.
contract AdManager is RelayerRequests {
    error AdExists();
    error UnknownAd();
    error NotAdCreator();
    error AdIsClosed();
    error InsufficientLiquidity();
    error OrderMismatch();
    error WrongOrderState();

    bytes32 private constant CREATE_AD_TYPEHASH = keccak256(
        "CreateAd(bytes32 authToken,uint256 deadline,bytes32 adId,bytes32 adCreator,bytes32 adToken,uint256 initialAmount,uint256 orderChainId,bytes32 adRecipient)"
    );
    bytes32 private constant FUND_AD_TYPEHASH =
        keccak256("FundAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount)");
    bytes32 private constant WITHDRAW_TYPEHASH =
        keccak256("WithdrawFromAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount,bytes32 to)");
    bytes32 private constant CLOSE_AD_TYPEHASH = keccak256("CloseAd(bytes32 authToken,uint256 deadline,bytes32 adId,bytes32 to)");
    bytes32 private constant LOCK_TYPEHASH =
        keccak256("LockForOrder(bytes32 authToken,uint256 deadline,bytes32 orderHash)");

    struct Ad {
        address creator;
        address token;
        uint256 orderChainId;
        bytes32 adRecipient;
        uint256 available;
        uint256 locked;
        bool closed;
    }

    enum OrderState {
        None,
        Locked,
        Unlocked,
        Released
    }

    mapping(bytes32 => Ad) public ads;
    mapping(bytes32 => OrderState) public orders;

    event AdCreated(
        bytes32 indexed adId,
        bytes32 indexed reqHash,
        address indexed creator,
        address token,
        uint256 amount,
        uint256 orderChainId,
        bytes32 adRecipient
    );
    event AdFunded(bytes32 indexed adId, bytes32 indexed reqHash, uint256 amount, uint256 available);
    event AdWithdrawn(bytes32 indexed adId, bytes32 indexed reqHash, uint256 amount, address to);
    event AdClosed(bytes32 indexed adId, bytes32 indexed reqHash, uint256 amount, address to);
    event OrderLocked(bytes32 indexed orderHash, bytes32 indexed reqHash, bytes32 indexed adId, uint256 amount);
    event OrderUnlocked(
        bytes32 indexed orderHash, bytes32 indexed reqHash, uint256 indexed nullifierHash, address recipient, uint256 amount
    );

    event LockReleased(bytes32 indexed orderHash, bytes32 indexed adId, uint256 amount);

    constructor(address relayer_, IGroth16Verifier verifier_, string memory name, string memory version)
        RelayerRequests(relayer_, verifier_, name, version)
    {}

    function createAd(
        bytes32 adId,
        address adToken,
        uint256 initialAmount,
        uint256 orderChainId,
        bytes32 adRecipient,
        bytes32 authToken,
        uint256 deadline,
        bytes calldata signature
    ) external payable {
        bytes32 reqHash = _consume(
            keccak256(
                abi.encode(
                    CREATE_AD_TYPEHASH,
                    authToken,
                    deadline,
                    adId,
                    _word(msg.sender),
                    _word(adToken),
                    initialAmount,
                    orderChainId,
                    adRecipient
                )
            ),
            authToken,
            deadline,
            signature
        );
        if (ads[adId].creator != address(0)) revert AdExists();
        ads[adId] = Ad(msg.sender, adToken, orderChainId, adRecipient, initialAmount, 0, false);
        _pull(adToken, initialAmount);
        emit AdCreated(adId, reqHash, msg.sender, adToken, initialAmount, orderChainId, adRecipient);
    }

    function fundAd(bytes32 adId, uint256 amount, bytes32 authToken, uint256 deadline, bytes calldata signature)
        external
        payable
    {
        bytes32 reqHash =
            _consume(keccak256(abi.encode(FUND_AD_TYPEHASH, authToken, deadline, adId, amount)), authToken, deadline, signature);
        Ad storage ad = _ownAd(adId);
        ad.available += amount;
        _pull(ad.token, amount);
        emit AdFunded(adId, reqHash, amount, ad.available);
    }

    function withdrawFromAd(
        bytes32 adId,
        uint256 amount,
        address to,
        bytes32 authToken,
        uint256 deadline,
        bytes calldata signature
    ) external {
        bytes32 reqHash = _consume(
            keccak256(abi.encode(WITHDRAW_TYPEHASH, authToken, deadline, adId, amount, _word(to))), authToken, deadline, signature
        );
        Ad storage ad = _ownAd(adId);
        // Locked tokens belong to in-flight orders: only the available balance can leave.
        if (amount > ad.available) revert InsufficientLiquidity();
        ad.available -= amount;
        _push(ad.token, to, amount);
        emit AdWithdrawn(adId, reqHash, amount, to);
    }

    function closeAd(bytes32 adId, address to, bytes32 authToken, uint256 deadline, bytes calldata signature) external {
        bytes32 reqHash =
            _consume(keccak256(abi.encode(CLOSE_AD_TYPEHASH, authToken, deadline, adId, _word(to))), authToken, deadline, signature);
        Ad storage ad = _ownAd(adId);
        uint256 amount = ad.available;
        ad.available = 0;
        ad.closed = true;
        _push(ad.token, to, amount);
        emit AdClosed(adId, reqHash, amount, to);
    }

    /// The Maker reserves `o.adAmount` (the ad token's units) of the ad's pool for the order the Bridger deposited.
    function lockForOrder(Order calldata o, bytes32 authToken, uint256 deadline, bytes calldata signature) external {
        bytes32 orderHash = orderHashOf(o);
        bytes32 reqHash =
            _consume(keccak256(abi.encode(LOCK_TYPEHASH, authToken, deadline, orderHash)), authToken, deadline, signature);
        if (o.adChainId != block.chainid || o.adManager != _self()) revert NotForThisContract();
        Ad storage ad = _ownAd(o.adId);
        // The deposit must pay the Maker where the ad said (creatorDstAddress), in the ad's token and chains.
        if (
            o.adChainToken != _word(ad.token) || o.orderChainId != ad.orderChainId || o.adCreator != _word(ad.creator)
                || o.orderRecipient != ad.adRecipient
        ) {
            revert OrderMismatch();
        }
        _checkTimes(o);
        if (orders[orderHash] != OrderState.None) revert WrongOrderState();
        if (o.adAmount > ad.available) revert InsufficientLiquidity();
        ad.available -= o.adAmount;
        ad.locked += o.adAmount;
        orders[orderHash] = OrderState.Locked;
        emit OrderLocked(orderHash, reqHash, o.adId, o.adAmount);
    }

    /// Releases a locked order to its ad-chain recipient (the Bridger), whoever submits it.
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
        if (orders[orderHash] != OrderState.Locked) revert WrongOrderState();
        // Strictly before lockExpiry: at lockExpiry itself only the release is possible, never both.
        if (block.timestamp >= o.lockExpiry) revert TooLate();
        // The root is the order chain's: this chain cannot read it, the relayer's signature above vouches for it.
        _spendWithProof(orderHash, targetRoot, nullifierHash, proof);
        orders[orderHash] = OrderState.Unlocked;
        _release(o, orderHash, reqHash, nullifierHash);
    }

    /// From the order's lockExpiry on, returns a lock the Bridger never unlocked to the ad's available
    /// balance (to the Maker directly when the ad is closed). Needs no relayer signature; anyone may submit it.
    function releaseLock(Order calldata o) external {
        bytes32 orderHash = orderHashOf(o);
        if (orders[orderHash] != OrderState.Locked) revert WrongOrderState();
        if (block.timestamp < o.lockExpiry) revert TooEarly();
        orders[orderHash] = OrderState.Released;
        Ad storage ad = ads[o.adId];
        ad.locked -= o.adAmount;
        if (ad.closed) _push(ad.token, ad.creator, o.adAmount);
        else ad.available += o.adAmount;
        emit LockReleased(orderHash, o.adId, o.adAmount);
    }

    function _release(Order calldata o, bytes32 orderHash, bytes32 reqHash, uint256 nullifierHash) private {
        Ad storage ad = ads[o.adId];
        ad.locked -= o.adAmount;
        address recipient = _toAddress(o.adRecipient);
        _push(ad.token, recipient, o.adAmount);
        emit OrderUnlocked(orderHash, reqHash, nullifierHash, recipient, o.adAmount);
    }

    function _ownAd(bytes32 adId) private view returns (Ad storage ad) {
        ad = ads[adId];
        if (ad.creator == address(0)) revert UnknownAd();
        if (ad.creator != msg.sender) revert NotAdCreator();
        if (ad.closed) revert AdIsClosed();
    }
}
