import {
  Account, FeeBumpTransaction, rpc, Transaction, TransactionBuilder, type xdr,
} from '@stellar/stellar-sdk';
import type { RelayerSigner } from '../../chains/signers.ts';

/** A signed Stellar transaction as the outbox keeps it: the base64 envelope and its hex hash. */
export interface SignedStellarTransaction {
  raw: string;
  txHash: string;
}

/**
 * Signs `tx` through the signer seam (the key never leaves its backend: memory or the PKCS#11 token)
 * and returns its envelope and hash, as `sendTransaction` takes and `getTransaction` finds them.
 * Throws when the signature does not verify under the account the keeper sends from.
 */
export async function signStellarTransaction(signer: RelayerSigner, tx: Transaction | FeeBumpTransaction): Promise<SignedStellarTransaction> {
  const hash = tx.hash();
  // addSignature verifies the signature over the hash under the public key before keeping it.
  tx.addSignature(await signer.stellarPublicKey(), (await signer.signStellar(hash)).toString('base64'));
  return { raw: tx.toXDR(), txHash: hash.toString('hex') };
}

/** The keeper's unsigned, unassembled transaction for `operation`, as simulation takes it. */
export function buildDraftTransaction(input: {
  account: string;
  sequence: bigint;
  operation: xdr.Operation;
  maxTime: bigint;
  networkPassphrase: string;
}): Transaction {
  const source = new Account(input.account, (input.sequence - 1n).toString());
  return new TransactionBuilder(source, { fee: '100', networkPassphrase: input.networkPassphrase, timebounds: { minTime: 0, maxTime: Number(input.maxTime) } })
    .addOperation(input.operation).build();
}

/**
 * The keeper's Soroban transaction for `operation`: source `account` with sequence number
 * `sequence`, valid until ledger close time `maxTime` (unix seconds), assembled from `simulation`
 * (footprint, resources, recorded auth, resource fee added to `inclusionFee`). Unsigned.
 */
export function buildInnerTransaction(input: {
  account: string;
  sequence: bigint;
  operation: xdr.Operation;
  inclusionFee: bigint;
  maxTime: bigint;
  networkPassphrase: string;
  simulation: rpc.Api.SimulateTransactionSuccessResponse;
}): Transaction {
  const source = new Account(input.account, (input.sequence - 1n).toString());
  const tx = new TransactionBuilder(source, {
    fee: input.inclusionFee.toString(), networkPassphrase: input.networkPassphrase, timebounds: { minTime: 0, maxTime: Number(input.maxTime) },
  }).addOperation(input.operation).build();
  const assembled = rpc.assembleTransaction(tx, input.simulation).build();
  if (BigInt(assembled.fee) !== input.inclusionFee + BigInt(input.simulation.minResourceFee)) {
    throw new Error(`assembled fee ${assembled.fee} is not the inclusion fee ${input.inclusionFee} plus the resource fee ${input.simulation.minResourceFee}`);
  }
  return assembled;
}

/** A fee-bump transaction paid by `account`, offering `inclusionFee` per operation, around the recorded and signed `inner`. Unsigned. */
export function buildFeeBump(account: string, inclusionFee: bigint, inner: Transaction, networkPassphrase: string): FeeBumpTransaction {
  return TransactionBuilder.buildFeeBumpTransaction(account, inclusionFee.toString(), inner, networkPassphrase);
}

/** A recorded envelope read back: the transaction, and for a fee bump the inner one it carries. */
export function parseEnvelope(raw: string, networkPassphrase: string): { tx: Transaction | FeeBumpTransaction; inner: Transaction } {
  const tx = TransactionBuilder.fromXDR(raw, networkPassphrase);
  return { tx, inner: tx instanceof FeeBumpTransaction ? tx.innerTransaction : tx };
}

/** The Soroban resource fee (stroops) a transaction declares; 0 for a classic one. */
export function resourceFeeOf(inner: Transaction): bigint {
  const data = inner.toEnvelope().v1().tx().ext().value();
  return data ? BigInt(data.resourceFee().toString()) : 0n;
}
