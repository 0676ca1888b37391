import { TransactionBuilder } from '@stellar/stellar-sdk';
import { authorizeWithWallet, sendStellarTransaction, stellarTransaction, stellarTransactionWithFeePayer, type CallExtras, type SignedResponse, type StellarAction } from '@cross-chain-relayer/client/stellar';
import { UserError } from '../errors.ts';
import type { StellarWallet } from './stellar.ts';

/** The Stellar chain as GET /v1/chains shows it: its Soroban RPC for clients and its network. */
export interface StellarChain { name: string; publicRpcUrl?: string; networkPassphrase?: string }

/**
 * The Stellar side of sending an API's signed response, loaded as its own chunk (stellar-sdk) only
 * when a Stellar transaction is sent (app/build.ts splits it off the main bundle). Builds and
 * simulates the call through the chain's `publicRpcUrl` (the one origin the CSP adds), has Freighter
 * sign it (or, with a fee payer set, sign the account's authorisation entries and the fee payer's envelope), calls `onHash` with the hash before sending (so a reload loses nothing), sends it and waits
 * for its ledger. Resolves the hash, what POST …/confirm takes.
 */
export async function sendStellar(wallet: StellarWallet, chain: StellarChain, action: StellarAction, signed: unknown, onHash: (hash: string) => void, extras?: CallExtras): Promise<string> {
  if (!chain.publicRpcUrl || !chain.networkPassphrase) {
    throw new UserError(`${chain.name} publishes no RPC URL for clients (publicRpcUrl): the page cannot send its transactions. Ask the operator to set it.`);
  }
  if (wallet.networkPassphrase !== chain.networkPassphrase) {
    throw new UserError(`Freighter is on "${wallet.networkPassphrase}"; ${chain.name} is "${chain.networkPassphrase}". Switch networks in Freighter.`);
  }
  const network = { rpc: chain.publicRpcUrl, networkPassphrase: chain.networkPassphrase };
  // With a fee payer, it is the source and signs the envelope; the account signs only its own
  // authorisation entries (Freighter's signAuthEntry), the pull of its tokens included.
  const feePayer = wallet.feePayer && wallet.feePayer !== wallet.address ? wallet.feePayer : undefined;
  const unsigned = feePayer
    ? await stellarTransactionWithFeePayer(action, signed as SignedResponse, {
      feePayer, caller: wallet.address,
      authorize: authorizeWithWallet((preimage) => wallet.signAuthEntry(preimage), wallet.address, chain.networkPassphrase),
    }, network, extras)
    : await stellarTransaction(action, signed as SignedResponse, wallet.address, network, extras);
  const signedXdr = await wallet.signTransaction(unsigned.toXDR(), feePayer);
  const tx = TransactionBuilder.fromXDR(signedXdr, chain.networkPassphrase);
  onHash(tx.hash().toString('hex'));
  return (await sendStellarTransaction(tx, network)).hash;
}
