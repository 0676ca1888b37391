import { createHash } from 'node:crypto';
import { Keypair, type rpc } from '@stellar/stellar-sdk';
import { getBytes } from 'ethers';
import { isStellarAccount, isStellarContract } from '../address.ts';
import { CallTargetError, type ChainAdapter } from '../adapter.ts';
import { assertI128Amount } from './amounts.ts';
import { stellarReads } from './reads.ts';
import { stellarContractCall, stellarTimeoutCall } from './call-args.ts';
import { stellarRequestHash } from './request-layout.ts';
import { createStellarClient } from './verify.ts';
import { RpcUnavailableError } from '../errors.ts';

/** A head not answered within this long counts the provider down. */
const HEAD_TIMEOUT_MS = 5_000;

const SEP53_PREFIX = 'Stellar Signed Message:\n';
const contractProblem = (value: string) => (isStellarContract(value) ? null : `must be a Stellar contract strkey (C...), received '${value}'`);

/** SEP-53: what a Stellar wallet signs for `message`, for clients and tests. */
export function sep53Digest(message: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.concat([Buffer.from(SEP53_PREFIX), Buffer.from(message)])).digest();
}

/** Stellar: G.../C... strkeys, ed25519 over the Stellar request layout, SEP-53 messages, SEP-10 sign-in, Soroban RPC. */
export const stellarAdapter: ChainAdapter<rpc.Server> = {
  kind: 'STELLAR',
  signInProtocol: 'SEP-10',
  walletAddressRule: 'a Stellar account G-address',
  isWalletAddress: isStellarAccount,
  isRecipientAddress: (value) => isStellarAccount(value) || isStellarContract(value),
  contractAddressProblem: contractProblem,
  canonicalAddress(value) {
    // A strkey is always upper case: the one spelling is the value itself.
    if (!isStellarAccount(value) && !isStellarContract(value)) throw new Error(`not a Stellar address: '${value}'`);
    return value;
  },
  canonicalTxHash(txHash) {
    const hex = txHash.replace(/^0x/i, '').toLowerCase();
    return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
  },
  isWalletSignature(address, message, signature) {
    // SEP-53 over the bytes, or over their 0x hex as text (Freighter's signMessage signs strings).
    const asText = new TextEncoder().encode(`0x${Buffer.from(message).toString('hex')}`);
    return [message, asText].some((signed) => {
      try {
        const bytes = /^0x[0-9a-fA-F]{128}$/.test(signature) ? getBytes(signature) : Buffer.from(signature, 'base64');
        if (bytes.length !== 64) return false;
        return Keypair.fromPublicKey(address).verify(sep53Digest(signed), Buffer.from(bytes));
      } catch {
        return false;
      }
    });
  },
  tokenProblem(token) {
    if (token.kind === 'ERC20') return 'kind ERC20 is an EVM token kind, not valid on a Stellar chain';
    const problem = contractProblem(token.address);
    return problem ? `address ${problem}` : null;
  },
  registryProblems(entry) {
    return entry.networkPassphrase == null ? ['networkPassphrase: required for a STELLAR chain'] : [];
  },
  publicFields(chain) {
    // The network a wallet signs for, and the RPC URL the operator publishes for clients (never the service's own).
    return {
      ...(chain.networkPassphrase !== null ? { networkPassphrase: chain.networkPassphrase } : {}),
      ...(chain.publicRpcUrl !== null ? { publicRpcUrl: chain.publicRpcUrl } : {}),
    };
  },
  keeperCall(call) {
    const [to, operation] = call.action === 'unlock'
      ? [String(call.signed.contractAddress), stellarContractCall('unlock', call.signed, { orderParams: call.orderParams, proof: call.proof })]
      : [call.action === 'refund' ? call.orderParams.orderPortal : call.orderParams.adManager, stellarTimeoutCall(call.action, call.orderParams)];
    return { to, data: operation.toXDR('base64'), value: 0n };
  },
  async signRequest({ target, primaryType, fields, values, returned, signer, domain }) {
    const problem = contractProblem(target.contractAddress);
    if (problem) throw new CallTargetError(`contractAddress ${problem}`);
    if (!target.networkPassphrase) throw new CallTargetError(`networkPassphrase is required for Stellar chain ${target.chainId}`);
    for (const name of ['amount', 'initialAmount']) {
      // Soroban token amounts are i128: a larger word would be signed but could never be honoured.
      if (name in returned) assertI128Amount(name, returned[name]!);
    }
    const hash = stellarRequestHash(
      { ...domain, networkPassphrase: target.networkPassphrase, chainId: target.chainId, contract: target.contractAddress }, primaryType, fields, values,
    );
    return {
      reqHash: `0x${hash.toString('hex')}`,
      signature: `0x${(await signer.signStellar(hash)).toString('hex')}`,
      signerPublicKey: await signer.stellarPublicKey(),
    };
  },
  connect: createStellarClient,
  async head(server) {
    let timer: NodeJS.Timeout | undefined;
    try {
      const latest = await Promise.race([
        server.getLatestLedger(),
        new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${HEAD_TIMEOUT_MS} ms`)), HEAD_TIMEOUT_MS); }),
      ]);
      return BigInt(latest.sequence);
    } catch (error) {
      throw new RpcUnavailableError(`Soroban RPC failed on getLatestLedger: ${(error as Error).message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  },
  reads: stellarReads,
};
