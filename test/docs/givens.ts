import type { Keypair } from '@stellar/stellar-sdk';
import type { Wallet } from 'ethers';
import type { createRelayerClient, Eip1193Provider, Schemas, StreamEvent } from '@cross-chain-relayer/client';

type RelayerClient = ReturnType<typeof createRelayerClient>;

/**
 * The names the docs' examples use without defining them: what the prose around an example says
 * the reader already has (a signed-in client, a trade's id, the wallet that signs), declared once
 * with their types for test/docs/code-blocks.test.ts. One meaning per name across every page.
 */
declare global {
  // The service and its clients: `api` anonymous, `me` signed in (client/README.md "Install").
  const baseUrl: string;
  const api: RelayerClient;
  const me: RelayerClient;
  // Ids and amounts the reader picked or was answered before.
  const id: string;
  const tradeId: string;
  const adId: string;
  const routeId: string;
  const amount: string;
  const bridgerDstAddress: string;
  const depositTxHash: string;
  const route: Schemas['Route'];
  const body: Schemas['CreateTradeBody'];
  const adBody: Schemas['CreateAdBody'];
  // Keys and wallets.
  const privateKey: string;
  const bridgerKey: string;
  const stellarSecret: string;
  const adChainRpcUrl: string;
  const wallet: Wallet;
  const bridger: Keypair;
  const payer: Keypair;
  const provider: Eip1193Provider;
  const address: string;
  const stellarAddress: string;
  const tokens: Schemas['Tokens'];
  /** Freighter's signTransaction (@stellar/freighter-api). */
  function signTransaction(xdr: string, options: { networkPassphrase: string; address?: string }): Promise<{ signedTxXdr: string }>;
  // The reader's own code, called by the examples.
  function save(txHash: string): void;
  function handle(event: StreamEvent): Promise<void>;
  function render(event: string, data: unknown): void;
  const session: { accessToken(): string | Promise<string> };
  function onEvent(event: StreamEvent): void;
  function askForUnlock(tradeId: string, options?: { side: 'ad' | 'order' }): void;
  /** A bot's authenticated fetch: the answer's JSON (docs/pushed-status.md). */
  function call(method: string, path: string, body?: object): Promise<any>;
  function sendOnAdChain(action: 'lockForOrder' | 'unlock', signed: unknown): Promise<string>;
  // Answers of earlier calls (docs/stellar-dapps.md): an ad's signed create, a trade's create and its unlock.
  const signed: Schemas['CreateAdResponse'];
  const trade: Schemas['CreateTradeResponse'];
  const d: Schemas['CreateTradeResponse']['reqContractDetails'];
  const u: Schemas['UnlockTradeResponse'];
  const saved: string | undefined;
  const rawBody: string;
  const headers: Record<string, string>;
}
export {};
