// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A batching helper, as smart accounts and multicall contracts are: one transaction, several calls,
/// each reverting the whole batch when it fails. Tests use it to carry events of several subjects
/// (several orders, several ads) in one transaction, and to replay another party's signed call data
/// copied from the mempool next to one's own.
contract Batcher {
    error CallFailed(uint256 index, bytes reason);

    function batch(address[] calldata targets, bytes[] calldata data) external {
        for (uint256 i = 0; i < targets.length; i++) {
            (bool ok, bytes memory reason) = targets[i].call(data[i]);
            if (!ok) revert CallFailed(i, reason);
        }
    }
}
