import { Signature, Transaction } from 'ethers';
import type { RelayerSigner } from '../../chains/signers.ts';
import type { Fees } from './fees.ts';

/** An EIP-1559 transaction the keeper sends. */
export interface KeeperEvmTransaction extends Fees {
  chainId: bigint;
  nonce: bigint;
  to: string;
  data: string;
  value: bigint;
  gasLimit: bigint;
}

/**
 * Signs `tx` through the signer seam (the key never leaves its backend: memory or the PKCS#11 token)
 * and returns the raw transaction and its hash, as `eth_sendRawTransaction` takes and answers them.
 */
export async function signEvmTransaction(signer: RelayerSigner, tx: KeeperEvmTransaction): Promise<{ raw: string; txHash: string }> {
  const unsigned = Transaction.from({
    type: 2, chainId: tx.chainId, nonce: Number(tx.nonce), to: tx.to, data: tx.data, value: tx.value, gasLimit: tx.gasLimit,
    maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
  });
  unsigned.signature = Signature.from(await signer.signEvmDigest(unsigned.unsignedHash));
  if (unsigned.from?.toLowerCase() !== (await signer.evmAddress()).toLowerCase()) {
    throw new Error('the keeper signer signed for another address than its own');
  }
  return { raw: unsigned.serialized, txHash: unsigned.hash! };
}
