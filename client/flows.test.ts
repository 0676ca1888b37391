import { Keypair, Transaction } from '@stellar/stellar-sdk';
import { getBytes, JsonRpcProvider, Wallet, type HDNodeWallet } from 'ethers';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilInstance } from '../devnet/anvil.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import {
  confirmUntilFinal, createRelayerClient, refreshingFetch, RelayerCallError, retryAfterMs, sendAndWait, signInWithEthereum, signInWithStellar,
  TransactionError, type Eip1193Provider,
} from './index.js';

/**
 * The flow helpers of the client package (client/flows.js) against the real service, a real HTTP
 * server for the confirm retries, and anvil behind a minimal EIP-1193 provider over an ethers Wallet
 * (the interface every injected wallet exposes): sign-in (SIWE and SEP-10), the token refreshed once
 * on a 401, a transaction sent and waited for, a revert named.
 */

/** The first anvil dev account's key (anvil funds it). */
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

/** An EIP-1193 provider as a wallet exposes it: the account's calls signed by `wallet`, the rest forwarded to the node. */
function walletProvider(wallet: Wallet | HDNodeWallet, node: JsonRpcProvider): Eip1193Provider {
  return {
    async request({ method, params }) {
      const list = (params ?? []) as unknown[];
      if (method === 'eth_accounts' || method === 'eth_requestAccounts') return [wallet.address];
      if (method === 'personal_sign') return wallet.signMessage(getBytes(list[0] as string));
      if (method === 'eth_sendTransaction') {
        const tx = list[0] as { to: string; data: string; value: string };
        // A fixed gas limit: the wallet sends what it is asked, even a call that will revert.
        return (await wallet.sendTransaction({ to: tx.to, data: tx.data, value: BigInt(tx.value), gasLimit: 200_000n })).hash;
      }
      return node.send(method, list);
    },
  };
}

describe('the flow helpers of the client package', () => {
  let service: TestService;
  let anvil: AnvilInstance;
  let node: JsonRpcProvider;
  let wallet: Wallet;

  beforeAll(async () => {
    [service, anvil] = await Promise.all([startTestService(), startAnvil({ chainId: 41_731 })]);
    node = new JsonRpcProvider(anvil.rpcUrl, undefined, { cacheTimeout: -1 });
    wallet = new Wallet(DEV_KEY, node);
  }, 240_000);

  afterAll(async () => {
    node?.destroy();
    await Promise.all([service?.close(), anvil?.stop()]);
  });

  it('signs in with SIWE through an EIP-1193 wallet (personal_sign of the challenge) and the token opens /v1/auth/me', async () => {
    const api = createRelayerClient(service.url);
    const signer = Wallet.createRandom();
    const login = await signInWithEthereum(api, walletProvider(signer, node), signer.address);
    expect(login.user.wallets.map((w) => w.address.toLowerCase())).toEqual([signer.address.toLowerCase()]);
    const me = await createRelayerClient(service.url, { accessToken: () => login.tokens.access }).GET('/v1/auth/me');
    expect(me.response.status).toBe(200);

    // A refused challenge (not an address) is the API's error, with its status and body.
    const refused = await signInWithEthereum(api, walletProvider(signer, node), 'not-an-address').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RelayerCallError);
    expect((refused as RelayerCallError).status).toBe(422);
    expect((refused as RelayerCallError).body).toMatchObject({ statusCode: 422 });
  });

  it('signs in with SEP-10 through a sign function given the challenge and its network passphrase', async () => {
    const keypair = Keypair.random();
    const passphrases: string[] = [];
    const login = await signInWithStellar(createRelayerClient(service.url), keypair.publicKey(), async (xdr, passphrase) => {
      passphrases.push(passphrase);
      const tx = new Transaction(xdr, passphrase);
      tx.sign(keypair);
      return tx.toEnvelope().toXDR('base64');
    });
    expect(passphrases).toHaveLength(1);
    expect(login.user.wallets.map((w) => w.address)).toEqual([keypair.publicKey()]);
  });

  it('refreshes the access token once on a 401 and sends the request again; concurrent 401s share one refresh', async () => {
    const signer = Wallet.createRandom();
    const login = await signInWithEthereum(createRelayerClient(service.url), walletProvider(signer, node), signer.address);
    let access = 'not-a-token';
    let refresh = login.tokens.refresh;
    let refreshes = 0;
    const anyone = createRelayerClient(service.url);
    const api = createRelayerClient(service.url, {
      accessToken: () => access,
      fetch: refreshingFetch({
        refresh: async () => {
          refreshes += 1;
          const answer = await anyone.POST('/v1/auth/refresh', { body: { refresh } });
          if (!answer.data) return undefined;
          ({ access, refresh } = answer.data.tokens);
          return access;
        },
      }),
    });
    const answers = await Promise.all([api.GET('/v1/auth/me'), api.GET('/v1/auth/me'), api.GET('/v1/auth/me')]);
    expect(answers.map((answer) => answer.response.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.data!.id).toBe(login.user.id);
    expect(refreshes).toBe(1);

    // A session that is over: the refresh gives nothing, the caller sees the 401.
    access = 'an-expired-token';
    refresh = 'not-a-refresh-token';
    const over = await api.GET('/v1/auth/me');
    expect(over.response.status).toBe(401);
    expect(refreshes).toBe(2);
  });

  it('sends a request whose 401 arrives after the refresh finished again with the new token, without a second refresh', async () => {
    const signer = Wallet.createRandom();
    const login = await signInWithEthereum(createRelayerClient(service.url), walletProvider(signer, node), signer.address);
    let access = 'an-expired-token';
    let refresh = login.tokens.refresh;
    let refreshes = 0;
    let refreshed!: () => void;
    const refreshDone = new Promise<void>((resolve) => { refreshed = resolve; });
    // The second request's answer (its 401) is held until the first one's refresh is over: what a slow connection does.
    let sends = 0;
    const slowSecond = async (request: Request) => {
      const n = (sends += 1);
      const response = await fetch(request);
      if (n === 2) await refreshDone;
      return response;
    };
    const anyone = createRelayerClient(service.url);
    const api = createRelayerClient(service.url, {
      accessToken: () => access,
      fetch: refreshingFetch({
        fetch: slowSecond,
        refresh: async () => {
          refreshes += 1;
          const answer = await anyone.POST('/v1/auth/refresh', { body: { refresh } });
          if (!answer.data) return undefined;
          ({ access, refresh } = answer.data.tokens);
          setTimeout(refreshed, 50);
          return access;
        },
      }),
    });
    const answers = await Promise.all([api.GET('/v1/auth/me'), api.GET('/v1/auth/me')]);
    expect(answers.map((answer) => answer.response.status)).toEqual([200, 200]);
    expect(refreshes).toBe(1);
    // The session goes on: the refresh token the one refresh gave is still good.
    expect((await anyone.POST('/v1/auth/refresh', { body: { refresh } })).response.status).toBe(200);
  });

  it('sends a transaction through EIP-1193 and resolves once it is mined; a revert throws TransactionError with the hash', async () => {
    const provider = walletProvider(wallet, node);
    const to = Wallet.createRandom().address;
    let sentHash: string | undefined;
    const hash = await sendAndWait(provider, { to, data: '0x', value: 1234n }, { onSent: (sent) => { sentHash = sent; } });
    expect(sentHash).toBe(hash);
    expect(await node.getBalance(to)).toBe(1234n);
    expect((await node.getTransactionReceipt(hash))?.status).toBe(1);

    // A contract whose runtime code is PUSH1 0 PUSH1 0 REVERT: every call to it reverts.
    const deployed = await (await wallet.sendTransaction({ data: '0x6460006000fd6000526005601bf3' })).wait();
    const reverting = deployed!.contractAddress!;
    expect(await node.getCode(reverting)).toBe('0x60006000fd');
    const error = await sendAndWait(provider, { to: reverting, data: '0x' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TransactionError);
    expect((error as TransactionError).reason).toBe('reverted');
    expect((await node.getTransactionReceipt((error as TransactionError).hash))?.status).toBe(0);
  });

  describe('confirmUntilFinal over HTTP', () => {
    let server: Server;
    let url: string;
    let answers: { status: number; code?: string; retryAfter?: string }[] = [];
    const seen: number[] = [];

    beforeAll(async () => {
      server = createServer((_request, response) => {
        seen.push(Date.now());
        const next = answers.shift() ?? { status: 200 };
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (next.retryAfter) headers['retry-after'] = next.retryAfter;
        response.writeHead(next.status, headers);
        response.end(JSON.stringify(next.status === 200 ? { tradeId: 't1', status: 'DEPOSITED' }
          : { statusCode: next.status, message: 'not yet', error: 'Conflict', code: next.code }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const confirmCall = () => createRelayerClient(url).POST('/v1/trades/{id}/confirm', { params: { path: { id: 't1' } }, body: { txHash: '0x01' } });

    it('asks again after NOT_FINAL and TRADE_AWAITING, waiting what Retry-After says, until the answer is final', async () => {
      answers = [{ status: 409, code: 'NOT_FINAL', retryAfter: '1' }, { status: 409, code: 'TRADE_AWAITING', retryAfter: '2' }];
      seen.length = 0;
      const waits: [string, number][] = [];
      const answer = await confirmUntilFinal(confirmCall, { onWait: (code, ms) => waits.push([code, ms]) });
      expect(answer.response.status).toBe(200);
      expect(waits).toEqual([['NOT_FINAL', 1000], ['TRADE_AWAITING', 2000]]);
      expect(seen).toHaveLength(3);
      expect(seen[1]! - seen[0]!).toBeGreaterThanOrEqual(950);
      expect(seen[2]! - seen[1]!).toBeGreaterThanOrEqual(1950);
    }, 20_000);

    it('returns another 409 at once, the last retryable one when retries run out, and stops on abort', async () => {
      answers = [{ status: 409, code: 'ALREADY_CONFIRMED' }];
      expect((await confirmUntilFinal(confirmCall)).error).toMatchObject({ code: 'ALREADY_CONFIRMED' });

      answers = [{ status: 409, code: 'NOT_FINAL', retryAfter: '1' }, { status: 409, code: 'NOT_FINAL', retryAfter: '1' }];
      const last = await confirmUntilFinal(confirmCall, { retries: 1 });
      expect(last.response.status).toBe(409);
      expect(last.error).toMatchObject({ code: 'NOT_FINAL' });

      answers = [{ status: 409, code: 'NOT_FINAL', retryAfter: '5' }];
      const stop = new AbortController();
      setTimeout(() => stop.abort(new Error('left the page')), 200);
      await expect(confirmUntilFinal(confirmCall, { signal: stop.signal })).rejects.toThrow('left the page');
      answers = [];
    }, 20_000);

    it('reads Retry-After as seconds or an HTTP date', () => {
      expect(retryAfterMs('3')).toBe(3000);
      expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
      expect(retryAfterMs(null)).toBeUndefined();
      expect(retryAfterMs('soon')).toBeUndefined();
    });
  });
});
