import type { Web3 } from 'web3';
import { BRIDGE_INTERFACE } from './abi.ts';
import { rpcCall } from './rpc.ts';

/** One deposit as the OrderPortal's `OrderCreated` event reports it. */
export interface PortalDeposit {
  orderHash: string;
  reqHash: string;
  leafIndex: number;
  leaf: bigint;
  secretCommitment: bigint;
  /** The portal's root right after this leaf was appended. */
  root: bigint;
  blockNumber: bigint;
  txHash: string;
}

const ORDER_CREATED = BRIDGE_INTERFACE.getEvent('OrderCreated')!;

/**
 * The OrderPortal's deposits in blocks `fromBlock..toBlock` (inclusive), in leaf order: what the
 * off-chain tree needs to fill a gap. Throws `RpcUnavailableError` when the RPC fails. Nodes cap
 * the range of one eth_getLogs; callers page through long ranges.
 */
export async function readPortalDeposits(
  web3: Web3,
  portal: string,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<PortalDeposit[]> {
  const logs = await rpcCall('eth_getLogs', () =>
    web3.eth.getPastLogs({
      address: portal,
      topics: [ORDER_CREATED.topicHash],
      fromBlock: `0x${fromBlock.toString(16)}`,
      toBlock: `0x${toBlock.toString(16)}`,
    }),
  );
  const deposits: PortalDeposit[] = [];
  for (const log of logs) {
    if (typeof log === 'string' || log.removed) continue;
    const parsed = BRIDGE_INTERFACE.parseLog({ topics: (log.topics ?? []).map(String), data: String(log.data ?? '0x') });
    if (!parsed) continue;
    deposits.push({
      orderHash: String(parsed.args.orderHash),
      reqHash: String(parsed.args.reqHash),
      leafIndex: Number(parsed.args.leafIndex),
      leaf: parsed.args.leaf as bigint,
      secretCommitment: parsed.args.secretCommitment as bigint,
      root: parsed.args.root as bigint,
      blockNumber: BigInt(log.blockNumber ?? 0),
      txHash: String(log.transactionHash),
    });
  }
  return deposits.sort((a, b) => a.leafIndex - b.leafIndex);
}

/** The portal's current tree state at `blockTag` (latest by default): root and number of leaves. */
export async function readPortalRoot(
  web3: Web3,
  portal: string,
  blockTag: bigint | 'latest' = 'latest',
): Promise<{ root: bigint; leafCount: number }> {
  // Both reads at one block number, so the root and the leaf count always belong together.
  const block = blockTag === 'latest' ? BigInt(await rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber())) : blockTag;
  const tag = `0x${block.toString(16)}`;
  const call = async (name: 'currentRoot' | 'nextLeafIndex') => {
    const data = BRIDGE_INTERFACE.encodeFunctionData(name);
    const result = await rpcCall(`eth_call ${name}`, () => web3.eth.call({ to: portal, data }, tag));
    return BRIDGE_INTERFACE.decodeFunctionResult(name, String(result))[0] as bigint;
  };
  const [root, leafCount] = await Promise.all([call('currentRoot'), call('nextLeafIndex')]);
  return { root, leafCount: Number(leafCount) };
}
