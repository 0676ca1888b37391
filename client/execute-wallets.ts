/**
 * The wallets `executeTrade` drives, behind two small interfaces, and their adapters: an EIP-1193
 * provider or an ethers Signer for an EVM chain; a Freighter-like wallet or a stellar-sdk Keypair
 * for Stellar. The trade code never asks which kind of wallet it holds.
 */
import type { Keypair } from '@stellar/stellar-sdk';
import type { Eip1193Provider } from './flows.js';
import type { EthersSignerLike, EvmWallet, FreighterLike, KeypairLike, StellarWallet } from './execute-types.ts';

const hex = (value: bigint) => `0x${value.toString(16)}`;

/**
 * stellar-sdk loaded on first use. Its browser build is CommonJS: a bundler that splits it into a
 * chunk of its own (esbuild with `splitting`) hands `import()` a namespace with `module.exports` as
 * `default` alone, Node and unsplit bundles one with the named exports too; either way, the SDK.
 */
export async function stellarSdk(): Promise<typeof import('@stellar/stellar-sdk')> {
  const loaded = await import('@stellar/stellar-sdk') as typeof import('@stellar/stellar-sdk') & { default?: typeof import('@stellar/stellar-sdk') };
  return loaded.TransactionBuilder ? loaded : loaded.default!;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(signal.reason); return; }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * An EVM wallet over any EIP-1193 provider (an injected wallet, WalletConnect, a node's RPC): it
 * sends from `from` (default: the first of `eth_accounts`) and polls receipts every `pollMs` (500).
 */
export function eip1193Wallet(provider: Eip1193Provider, options: { from?: string; pollMs?: number } = {}): EvmWallet {
  let account = options.from;
  const from = async () => {
    account ??= ((await provider.request({ method: 'eth_accounts' })) as string[])[0];
    if (!account) throw new Error('the wallet shared no account (eth_accounts is empty): ask it with eth_requestAccounts first');
    return account;
  };
  return {
    getAddress: from,
    async send(tx) {
      const params = { from: await from(), to: tx.to, data: tx.data, value: hex(tx.value), ...(tx.gas === undefined ? {} : { gas: hex(tx.gas) }) };
      return (await provider.request({ method: 'eth_sendTransaction', params: [params] })) as string;
    },
    async estimateGas(tx) {
      const params = [{ from: await from(), to: tx.to, data: tx.data, value: hex(tx.value) }];
      return BigInt((await provider.request({ method: 'eth_estimateGas', params })) as string);
    },
    async wait(hash, signal) {
      for (;;) {
        const receipt = (await provider.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as { status?: string } | null;
        if (receipt) return receipt.status === '0x1';
        await pause(options.pollMs ?? 500, signal);
      }
    },
    async call(tx) {
      return (await provider.request({ method: 'eth_call', params: [{ to: tx.to, data: tx.data }, 'latest'] })) as string;
    },
    async latestTimestamp() {
      const block = (await provider.request({ method: 'eth_getBlockByNumber', params: ['latest', false] })) as { timestamp: string };
      return BigInt(block.timestamp);
    },
    async signOrderHash(orderHash) {
      // A 0x-prefixed hex message is signed as its bytes by personal_sign.
      return (await provider.request({ method: 'personal_sign', params: [orderHash, await from()] })) as string;
    },
  };
}

const bytesOf = (hash: string) => Uint8Array.from(hash.slice(2).match(/../g) ?? [], (pair) => parseInt(pair, 16));

/** An EVM wallet over an ethers v6 Signer connected to the chain's provider. */
export function ethersWallet(signer: EthersSignerLike): EvmWallet {
  const provider = () => {
    if (!signer.provider) throw new Error('the ethers signer has no provider: connect it to the chain first (wallet.connect(provider))');
    return signer.provider;
  };
  return {
    getAddress: () => signer.getAddress(),
    async send(tx) {
      return (await signer.sendTransaction({ to: tx.to, data: tx.data, value: tx.value, ...(tx.gas === undefined ? {} : { gasLimit: tx.gas }) })).hash;
    },
    estimateGas: (tx) => signer.estimateGas({ to: tx.to, data: tx.data, value: tx.value }),
    async wait(hash) {
      const receipt = await provider().waitForTransaction(hash);
      return receipt?.status === 1;
    },
    call: (tx) => signer.call(tx),
    async latestTimestamp() {
      const block = await provider().getBlock('latest');
      if (!block) throw new Error('the provider has no latest block');
      return BigInt(block.timestamp);
    },
    signOrderHash: (orderHash) => signer.signMessage(bytesOf(orderHash)),
  };
}

const base64 = (bytes: Uint8Array) => btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''));

/** A Stellar wallet over Freighter's `signTransaction` and `signMessage` for the account `address`. */
export function freighterWallet(freighter: FreighterLike, address: string): StellarWallet {
  return {
    address,
    async signTransaction(xdr, { networkPassphrase }) {
      const signed = await freighter.signTransaction(xdr, { networkPassphrase, address });
      return typeof signed === 'string' ? signed : signed.signedTxXdr;
    },
    async signUnlock(orderHash) {
      const { unlockMessage } = await import('./flows.js');
      const signed = await freighter.signMessage(unlockMessage(orderHash), { address });
      const message = typeof signed === 'string' ? signed : signed.signedMessage;
      if (message === null) throw new Error('the wallet signed nothing');
      return typeof message === 'string' ? message : base64(message);
    },
    ...(freighter.signAuthEntry ? {
      async signAuthEntry(preimageXdr: string, { networkPassphrase }: { networkPassphrase: string }) {
        const signed = await freighter.signAuthEntry!(preimageXdr, { networkPassphrase, address });
        const entry = typeof signed === 'string' ? signed : signed.signedAuthEntry;
        if (entry === null) throw new Error('the wallet signed nothing');
        return typeof entry === 'string' ? entry : base64(entry);
      },
    } : {}),
  };
}

/** A Stellar wallet over a key this code holds (stellar-sdk's Keypair): a server-side Bridger, a test. */
export function keypairWallet(key: KeypairLike): StellarWallet {
  const keypair = key as Keypair; // a stellar-sdk Keypair: what it signs with
  return {
    address: keypair.publicKey(),
    async signTransaction(xdr, { networkPassphrase }) {
      const { TransactionBuilder } = await stellarSdk();
      const tx = TransactionBuilder.fromXDR(xdr, networkPassphrase);
      tx.sign(keypair);
      return tx.toXDR();
    },
    async signUnlock(orderHash) {
      const { signUnlockMessage } = await import('./stellar.js');
      return signUnlockMessage(keypair, orderHash);
    },
    async signAuthEntry(preimageXdr) {
      // What a wallet's signAuthEntry signs: SHA-256 of the preimage's XDR bytes.
      const { hash, xdr } = await stellarSdk();
      return base64(keypair.sign(hash(xdr.HashIdPreimage.fromXDR(preimageXdr, 'base64').toXDR())));
    },
  };
}
