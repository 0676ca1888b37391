import { getBytes, JsonRpcProvider, Wallet } from 'ethers';
import type { Keypair } from '@stellar/stellar-sdk';
import { hash, Transaction } from '@stellar/stellar-sdk';
import type { Page } from 'playwright-core';
import { sep53Digest } from '../../chains/wallet-signature.ts';

/**
 * Test doubles of browser wallets, named as doubles, speaking the real interfaces a page meets (no
 * real extension can be installed in the test browser). Their keys stay in the test process, as an
 * extension's keys stay in its background page: the page reaches them through a Playwright binding.
 */

/** What the EVM double is told to do on its next request (a person's choices in a wallet's popup). */
export interface EvmDoubleControls {
  /** Refuse the next signature or transaction as a person would (EIP-1193 4001). */
  rejectNext: boolean;
  /** Refuse to switch chains (a wallet without the chain, or a person saying no). */
  refuseSwitch: boolean;
  /** Puts the wallet on `chainId`, as a person choosing a network in the wallet. */
  switchTo(chainId: string): void;
  /** Answer "not mined yet" for the transactions sent from this index of `sent` on (the page waits), as a slow node would. */
  holdReceiptsFrom: number | undefined;
  /** The hashes of the transactions sent, in order. */
  sent: string[];
}

export type EvmDouble = EvmDoubleControls & { wallet: Wallet; close(): void };

/**
 * An EIP-1193 provider backed by a devnet key on the anvil chains `rpcUrls` (chain id -> URL),
 * announced to the page by EIP-6963 as "Test wallet (double)". Answers what the app asks: accounts,
 * chain id and switching, personal_sign, eth_sendTransaction (signed with the key, sent to the
 * chain the wallet is on), and the reads (receipts, calls, balances) from that chain's node.
 */
export async function installEvmWalletDouble(page: Page, key: string, rpcUrls: Record<string, string>, startChain: string): Promise<EvmDouble> {
  const providers = new Map(Object.entries(rpcUrls).map(([chainId, url]) => [chainId, new JsonRpcProvider(url, undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 100 })]));
  const wallet = new Wallet(key);
  let chainId = startChain;
  const controls = { rejectNext: false, refuseSwitch: false, holdReceiptsFrom: undefined as number | undefined, sent: [] as string[], switchTo: (id: string) => { chainId = id; } };
  const rejected = { error: { code: 4001, message: 'User rejected the request. (test wallet double)' } };
  const handle = async (method: string, params: any[]): Promise<unknown> => {
    const provider = providers.get(chainId)!;
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [wallet.address];
      case 'eth_chainId':
        return `0x${BigInt(chainId).toString(16)}`;
      case 'wallet_switchEthereumChain': {
        const wanted = BigInt(params[0].chainId).toString();
        if (controls.refuseSwitch) return { error: { code: 4902, message: `Unrecognized chain ID ${params[0].chainId} (test wallet double)` } };
        if (!providers.has(wanted)) return { error: { code: 4902, message: `Unrecognized chain ID ${params[0].chainId}` } };
        chainId = wanted;
        return null;
      }
      case 'personal_sign':
        if (controls.rejectNext) { controls.rejectNext = false; return rejected; }
        return wallet.signMessage(getBytes(params[0]));
      case 'eth_sendTransaction': {
        if (controls.rejectNext) { controls.rejectNext = false; return rejected; }
        const [tx] = params;
        const sent = await wallet.connect(provider).sendTransaction({ to: tx.to, data: tx.data, value: BigInt(tx.value ?? '0x0') });
        controls.sent.push(sent.hash);
        return sent.hash;
      }
      case 'eth_getTransactionReceipt':
        if (controls.holdReceiptsFrom !== undefined && controls.sent.indexOf(params[0]) >= controls.holdReceiptsFrom) return null;
        return provider.send(method, params);
      default:
        return provider.send(method, params ?? []);
    }
  };
  await page.exposeBinding('__evmWalletDouble', async (_source, text: string) => {
    const { method, params } = JSON.parse(text);
    try {
      const result = await handle(method, params);
      return JSON.stringify(result !== null && typeof result === 'object' && 'error' in result ? result : { result });
    } catch (error) {
      return JSON.stringify({ error: { code: -32603, message: (error as Error).message } });
    }
  });
  await page.addInitScript(() => {
    const g = globalThis as any;
    const provider = {
      isTestWalletDouble: true,
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const answer = JSON.parse(await g.__evmWalletDouble(JSON.stringify({ method, params })));
        if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
        return answer.result;
      },
      on() {},
      removeListener() {},
    };
    const info = Object.freeze({ uuid: '0b8c1d8e-6f3a-4c2e-9f61-test00double', name: 'Test wallet (double)', icon: 'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg"/%3E', rdns: 'org.example.test-wallet-double' });
    const announce = () => g.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }));
    g.addEventListener('eip6963:requestProvider', announce);
    announce();
  });
  return Object.assign(controls, { wallet, close: () => { for (const provider of providers.values()) provider.destroy(); } });
}

/**
 * A double of the Freighter extension: answers the Freighter API's window messages
 * (`FREIGHTER_EXTERNAL_MSG_REQUEST` -> `FREIGHTER_EXTERNAL_MSG_RESPONSE`, as its content script does;
 * github.com/stellar/freighter, extension/src/contentScript) for `keypair` on `network`: access,
 * the public key, the network details, transactions signed with the key, and messages signed as
 * its `signMessage` asks (`SUBMIT_BLOB`: the extension signs SEP-53, ed25519 over
 * SHA-256("Stellar Signed Message:\n" + the text), and answers `signedBlob` in base64 to API v4+),
 * and authorisation entries as its `signAuthEntry` asks (`SUBMIT_AUTH_ENTRY`: ed25519 over SHA-256
 * of the entry's preimage XDR, `signedAuthEntry` in base64). `signed` lists the texts it signed;
 * `others`: more accounts the wallet holds (a person's second account, a fee payer), used when a
 * request names them (`accountToSign`); `authEntries` and `envelopes` list whose entries and
 * transactions it signed.
 */
export async function installFreighterDouble(page: Page, keypair: Keypair, network: { name: string; passphrase: string }, others: Keypair[] = []): Promise<FreighterDouble> {
  const controls: FreighterDouble = { declineNext: false, network, signed: [], authEntries: [], envelopes: [] };
  const accounts = new Map([keypair, ...others].map((key) => [key.publicKey(), key]));
  // The account a request names, else the active one (the extension's `accountToSign`).
  const signerOf = (request: { accountToSign?: string }) => accounts.get(request.accountToSign || keypair.publicKey());
  await page.exposeBinding('__freighterDouble', async (_source, text: string) => {
    const request = JSON.parse(text);
    const declined = { apiError: { code: -4, message: 'The user rejected this request. (Freighter double)' } };
    switch (request.type) {
      case 'REQUEST_CONNECTION_STATUS': return JSON.stringify({ isConnected: true });
      case 'REQUEST_ALLOWED_STATUS': return JSON.stringify({ isAllowed: true });
      case 'SET_ALLOWED_STATUS': return JSON.stringify({ isAllowed: true });
      case 'REQUEST_ACCESS':
      case 'REQUEST_PUBLIC_KEY': return JSON.stringify({ publicKey: keypair.publicKey() });
      case 'REQUEST_NETWORK': return JSON.stringify({ network: controls.network.name, networkPassphrase: controls.network.passphrase });
      case 'REQUEST_NETWORK_DETAILS': {
        const { name, passphrase } = controls.network;
        return JSON.stringify({ networkDetails: { network: name, networkName: name, networkUrl: 'http://127.0.0.1', networkPassphrase: passphrase } });
      }
      case 'SUBMIT_TRANSACTION': {
        if (controls.declineNext) { controls.declineNext = false; return JSON.stringify(declined); }
        const signer = signerOf(request);
        if (!signer) return JSON.stringify({ apiError: { code: -1, message: `no account ${request.accountToSign} in the Freighter double` } });
        const tx = new Transaction(request.transactionXdr, request.networkPassphrase ?? controls.network.passphrase);
        tx.sign(signer);
        controls.envelopes.push(signer.publicKey());
        return JSON.stringify({ signedTransaction: tx.toEnvelope().toXDR('base64'), signerAddress: signer.publicKey() });
      }
      case 'SUBMIT_AUTH_ENTRY': {
        if (controls.declineNext) { controls.declineNext = false; return JSON.stringify(declined); }
        const signer = signerOf(request);
        if (!signer) return JSON.stringify({ apiError: { code: -1, message: `no account ${request.accountToSign} in the Freighter double` } });
        controls.authEntries.push(signer.publicKey());
        const signature = signer.sign(hash(Buffer.from(request.entryXdr, 'base64')));
        return JSON.stringify({ signedAuthEntry: signature.toString('base64'), signerAddress: signer.publicKey() });
      }
      case 'SUBMIT_BLOB': {
        if (controls.declineNext) { controls.declineNext = false; return JSON.stringify(declined); }
        controls.signed.push(request.blob);
        const signature = (signerOf(request) ?? keypair).sign(sep53Digest(Buffer.from(request.blob, 'utf8')));
        return JSON.stringify({ signedBlob: signature.toString('base64'), signerAddress: keypair.publicKey() });
      }
      default:
        return JSON.stringify({ apiError: { code: -1, message: `the Freighter double does not do ${request.type}` } });
    }
  });
  await page.addInitScript(() => {
    const g = globalThis as any;
    g.addEventListener('message', async (event: MessageEvent) => {
      if (event.source !== g || event.data?.source !== 'FREIGHTER_EXTERNAL_MSG_REQUEST') return;
      const answer = JSON.parse(await g.__freighterDouble(JSON.stringify(event.data)));
      // Freighter's content script answers with `messagedId` (sic), which the API matches on.
      g.postMessage({ source: 'FREIGHTER_EXTERNAL_MSG_RESPONSE', messagedId: event.data.messageId, ...answer }, g.location.origin);
    });
  });
  return controls;
}

/** What a test steers and reads of the Freighter double. */
export interface FreighterDouble {
  /** Decline the next signature request, as a person would in the popup. */
  declineNext: boolean;
  network: { name: string; passphrase: string };
  /** The texts signed with signMessage. */
  signed: string[];
  /** Whose authorisation entries were signed (signAuthEntry), in order. */
  authEntries: string[];
  /** Which account signed each transaction envelope (signTransaction), in order. */
  envelopes: string[];
}
