import { getAddress, verifyMessage } from 'ethers';
import type { Web3 } from 'web3';
import { isEvmAddress } from '../address.ts';
import { CallTargetError, type ChainAdapter } from '../adapter.ts';
import { NATIVE_TOKEN_ADDRESS } from '../../domain/index.ts';
import { evmReads } from './reads.ts';
import { evmTimeoutTransaction, evmTransaction } from './call-args.ts';
import { createEvmClient, rpcCall } from './rpc.ts';

/** A head not answered within this long counts the provider down. */
const HEAD_TIMEOUT_MS = 5_000;
import { typedDataDigest } from './typed-data.ts';

const addressProblem = (value: string) => (isEvmAddress(value) ? null : `must be a 0x-prefixed 20-byte EVM address, received '${value}'`);

/** EVM chains: EIP-55 addresses, EIP-712 requests, EIP-191 wallet signatures, SIWE sign-in, web3 JSON-RPC. */
export const evmAdapter: ChainAdapter<Web3> = {
  kind: 'EVM',
  signInProtocol: 'SIWE',
  walletAddressRule: 'an EVM address (0x and 40 hex digits, a valid EIP-55 checksum when mixed-case)',
  isWalletAddress: isEvmAddress,
  isRecipientAddress: isEvmAddress,
  contractAddressProblem: addressProblem,
  canonicalAddress(value) {
    if (!isEvmAddress(value)) throw new Error(`not an EVM address: '${value}'`);
    return getAddress(value);
  },
  canonicalTxHash(txHash) {
    const hex = txHash.replace(/^0x/i, '').toLowerCase();
    return /^[0-9a-f]{64}$/.test(hex) ? `0x${hex}` : undefined;
  },
  isWalletSignature(address, message, signature) {
    // EIP-191 personal_sign over the bytes, or over their 0x hex as text (wallets that sign strings only).
    const asText = new TextEncoder().encode(`0x${Buffer.from(message).toString('hex')}`);
    return [message, asText].some((signed) => {
      try {
        return verifyMessage(signed, signature).toLowerCase() === address.toLowerCase();
      } catch {
        return false;
      }
    });
  },
  tokenProblem(token) {
    if (token.kind === 'SEP41') return 'kind SEP41 is a Stellar token kind, not valid on an EVM chain';
    if (!isEvmAddress(token.address)) return `address must be a 0x-prefixed 20-byte EVM address, received '${token.address}'`;
    const isZero = token.address.toLowerCase() === NATIVE_TOKEN_ADDRESS;
    if (token.kind === 'NATIVE' && !isZero) return `a NATIVE token on an EVM chain has the all-zero address, received '${token.address}'`;
    if (token.kind === 'ERC20' && isZero) return 'an ERC20 token cannot have the all-zero address';
    return null;
  },
  registryProblems(entry) {
    return entry.publicRpcUrl != null ? ['publicRpcUrl: only a STELLAR chain publishes one'] : [];
  },
  publicFields: () => ({}),
  keeperCall(call) {
    return call.action === 'unlock'
      ? evmTransaction('unlock', call.signed, { orderParams: call.orderParams, proof: call.proof })
      : evmTimeoutTransaction(call.action, call.orderParams);
  },
  async signRequest({ target, primaryType, fields, values, signer, domain }) {
    const problem = addressProblem(target.contractAddress);
    if (problem) throw new CallTargetError(`contractAddress ${problem}`);
    const reqHash = typedDataDigest({ ...domain, chainId: target.chainId, verifyingContract: target.contractAddress }, primaryType, fields, values);
    return { reqHash, signature: await signer.signEvmDigest(reqHash) };
  },
  connect: createEvmClient,
  head: async (web3) => BigInt(await rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber(), { timeoutMs: HEAD_TIMEOUT_MS })),
  reads: evmReads,
};
