import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
import { StrKey } from '@stellar/stellar-sdk';
import { Contract, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { CallExtras as ServiceCallExtras, EvmTransactionRequest as ServiceTransaction, TimeoutAction } from '../chains/evm/call-args.ts';
import type { OrderParams as ServiceOrderParams } from '../chains/order.ts';
import type { ActionName } from '../chains/request-schema.ts';
import { freeLoopbackPort } from '../entrypoints/free-port.ts';
import { launchBrowser } from '../test/support/browser.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { erc20ApproveTransaction, evmTransaction } from './evm.js';
import type { CallExtras, EvmAction, EvmTimeoutAction, EvmTransactionRequest, OrderParams, SignedResponse } from './evm.js';
import { bundleEventHelpers, bundleEvmCalls, bundleExecute, declareExecute, bundleFlowHelpers, declareFlowHelpers, bundleOrderHash, declareEventHelpers, declareEvmCalls, declareOrderHash, generateClientTypes, servedDocument } from './generate.ts';
import { orderHashOf, type OrderParams as ClientOrderParams } from './order.js';
import { unlockMessage } from './flows.js';
import { computeOrderHash } from '../chains/order.ts';
import { createRelayerClient, type Schemas } from './index.js';

/**
 * The committed client matches the service: its openapi.json is the document /openapi.json serves,
 * and its schema.d.ts is what openapi-typescript makes of it. Regenerate with `npm run client:generate`.
 * (test/trades/client-trade.test.ts settles a whole trade through it.)
 */
describe('the typed client package', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service?.close(); });

  const committed = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');

  it('carries the document the service serves (else run npm run client:generate)', async () => {
    const served = await (await service.request('/openapi.json')).json();
    expect(JSON.parse(committed('./openapi.json'))).toEqual(served);
    expect(servedDocument()).toEqual(served);
  });

  it('carries the types openapi-typescript generates from it (else run npm run client:generate)', async () => {
    expect(committed('./schema.d.ts')).toBe(await generateClientTypes(JSON.parse(committed('./openapi.json'))));
  });

  it('carries the EVM calls bundled from the service\'s own call assembly, with nothing from Node and only ethers outside (else run npm run client:generate)', async () => {
    const bundle = await bundleEvmCalls();
    expect(committed('./evm.js')).toBe(bundle);
    expect(committed('./evm.d.ts')).toBe(declareEvmCalls());
    const imported = [...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1]);
    expect(new Set(imported)).toEqual(new Set(['ethers']));
    expect(bundle).not.toMatch(/\brequire\(|node:|\bBuffer\b|\bprocess\./);
    // The package ships what its exports name.
    const manifest = JSON.parse(committed('./package.json')) as { files: string[]; exports: Record<string, string | Record<string, string>> };
    const exported = Object.values(manifest.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target)));
    for (const file of exported) expect(manifest.files).toContain(file.replace(/^\.\//, ''));
  }, 60_000);

  it('runs in a real browser (headless Chromium, no Node globals) with ethers\' own browser build, encoding what it encodes in Node', async () => {
    // Responses a dApp gets: an ad paid out on Stellar (a G... recipient), and an ad-side unlock of an order from Stellar (C... portal and token).
    const g = StrKey.encodeEd25519PublicKey(Buffer.alloc(32, 7));
    const c = StrKey.encodeContract(Buffer.alloc(32, 9));
    const evm = (n: number) => new Wallet(`0x${String(n).padStart(64, '0')}`).address;
    const signed = { contractAddress: evm(1), authToken: `0x${'ab'.repeat(32)}`, deadline: '1999999999', signature: `0x${'11'.repeat(65)}` };
    const orderParams = {
      orderChainToken: c, adChainToken: evm(2), amount: '100', orderAmount: '100', adAmount: '95', bridger: g, orderRecipient: g,
      adId: '0b5c2a6e-8f0e-4f7a-9a51-3c1d2e4f5a6b', adCreator: evm(3), adRecipient: g, salt: '12345', orderChainId: '9999',
      orderPortal: c, adChainId: '31338', adManager: evm(1), lockExpiry: '1900000000', refundTime: '1900086400',
    };
    const cases: [EvmAction, SignedResponse][] = [
      ['createAd', { ...signed, adId: orderParams.adId, adToken: '0x0000000000000000000000000000000000000000', initialAmount: '1000', orderChainId: '9999', adRecipient: g }],
      ['unlock', { ...signed, orderParams, proof: `0x${'22'.repeat(256)}`, nullifierHash: '77', targetRoot: '88', orderHash: `0x${'cd'.repeat(32)}` }],
    ];
    const inNode = cases.map(([action, response]) => { const tx = evmTransaction(action, response); return { ...tx, value: tx.value.toString() }; });
    expect(inNode[0]!.value).toBe('1000'); // native token: the amount travels as value

    const files: Record<string, [string, Buffer]> = {
      '/evm.js': ['text/javascript', readFileSync(new URL('./evm.js', import.meta.url))],
      '/ethers.js': ['text/javascript', readFileSync(new URL('../node_modules/ethers/dist/ethers.js', import.meta.url))],
      '/': ['text/html', Buffer.from('<!doctype html><title>dApp</title><script type="importmap">{"imports":{"ethers":"/ethers.js"}}</script>'
        + '<script type="module">import { evmTransaction } from "/evm.js"; window.evmTransaction = evmTransaction;</script>')],
    };
    const site = createServer((req, res) => {
      const [type, body] = files[req.url ?? ''] ?? ['text/plain', Buffer.from('not found')];
      res.writeHead(files[req.url ?? ''] ? 200 : 404, { 'content-type': type }).end(body);
    });
    const port = await freeLoopbackPort();
    await new Promise<void>((resolve) => site.listen(port, '127.0.0.1', resolve));
    const browser = await launchBrowser();
    try {
      await browser.page.goto(`http://127.0.0.1:${port}/`);
      await browser.page.waitForFunction(() => typeof (globalThis as any).evmTransaction === 'function');
      const inBrowser = await browser.page.evaluate((given) => {
        const globals = { Buffer: typeof (globalThis as any).Buffer, process: typeof (globalThis as any).process };
        const build = (globalThis as any).evmTransaction;
        return { globals, txs: given.map(([action, response]: [string, unknown]) => { const tx = build(action, response); return { ...tx, value: tx.value.toString() }; }) };
      }, cases);
      expect(inBrowser.globals).toEqual({ Buffer: 'undefined', process: 'undefined' });
      expect(inBrowser.txs).toEqual(inNode);
    } finally {
      await browser.close();
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
    }
  }, 120_000);

  it('carries the stream helpers bundled from client/events-entry.ts, importing nothing (else run npm run client:generate)', async () => {
    const bundle = await bundleEventHelpers();
    expect(committed('./events.js')).toBe(bundle);
    expect(committed('./events.d.ts')).toBe(declareEventHelpers());
    expect(bundle).not.toMatch(/^import |\brequire\(|node:|\bBuffer\b|\bprocess\./m);
  }, 60_000);

  it('carries the flow helpers bundled from client/flows-entry.ts, importing nothing (else run npm run client:generate)', async () => {
    const bundle = await bundleFlowHelpers();
    expect(committed('./flows.js')).toBe(bundle);
    expect(committed('./flows.d.ts')).toBe(declareFlowHelpers());
    expect(bundle).not.toMatch(/^import |\brequire\(|node:|\bBuffer\b|\bprocess\./m);
  }, 60_000);

  it('carries executeTrade bundled from client/execute-entry.ts, importing only the package\'s own entries, stellar-sdk and, for the file store, node:fs (else run npm run client:generate)', async () => {
    const bundle = await bundleExecute();
    expect(committed('./execute.js')).toBe(bundle);
    expect(committed('./execute.d.ts')).toBe(declareExecute());
    // Static imports are the dependency-free entries only: ethers, stellar-sdk and fs load when a trade or a store needs them.
    expect([...bundle.matchAll(/^import .* from "([^"]+)";$/gm)].map((match) => match[1])).toEqual(['./events.js', './flows.js', './flows.js']);
    expect(bundle).not.toMatch(/\brequire\(|\bBuffer\b|\bprocess\./);
  }, 60_000);

  it('computes orderHashOf (client/order.js, standing alone) as the service and the Soroban contracts do, on orders of both chain kinds', async () => {
    const bundle = await bundleOrderHash();
    expect(committed('./order.js')).toBe(bundle);
    expect(committed('./order.d.ts')).toBe(declareOrderHash());
    expect(bundle).not.toMatch(/^import /m);
    expect(bundle).not.toMatch(/\brequire\(|node:|\bBuffer\b|\bprocess\./);
    // The Soroban vectors: orders between an EVM chain and Stellar (G.../C... addresses), each with
    // the hash the service computed and the contracts' cargo tests hold the Soroban code to.
    const orders: { params: ClientOrderParams; hash: string }[] = [];
    const collect = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      const candidate = node as { params?: ClientOrderParams; hash?: string };
      if (candidate.params && typeof candidate.hash === 'string') orders.push({ params: candidate.params, hash: candidate.hash });
      Object.values(node).forEach(collect);
    };
    collect(JSON.parse(readFileSync(new URL('../contracts/soroban/vectors.json', import.meta.url), 'utf8')));
    expect(orders.length).toBeGreaterThan(10);
    const domain = { name: 'ProofBridge', version: '1' };
    for (const { params, hash } of orders) {
      expect(orderHashOf(params)).toBe(hash);
      expect(computeOrderHash(params, domain)).toBe(hash);
    }
    // An order between two EVM chains, seeded, and a /params answer (its own orderHash beside the order).
    const evm = (n: number) => new Wallet(`0x${String(n).padStart(64, '0')}`).address;
    const evmOrder: ClientOrderParams = {
      orderChainToken: evm(4), adChainToken: evm(5), amount: '1000000', orderAmount: '1000000', adAmount: '1000000000000000000', bridger: evm(6),
      orderRecipient: evm(7), adId: '0b5c2a6e-8f0e-4f7a-9a51-3c1d2e4f5a6b', adCreator: evm(7), adRecipient: evm(6), salt: '987654321987654321',
      orderChainId: '31337', orderPortal: evm(8), adChainId: '31338', adManager: evm(9), lockExpiry: '1900000000', refundTime: '1900021600',
    };
    const serviceHash = computeOrderHash(evmOrder, domain);
    expect(orderHashOf(evmOrder)).toBe(serviceHash);
    expect(orderHashOf({ ...evmOrder, orderHash: serviceHash } as ClientOrderParams)).toBe(serviceHash);
    // Another domain (EIP712_DOMAIN_NAME / _VERSION) is another hash, as on the service.
    expect(orderHashOf(evmOrder, { name: 'Other', version: '2' })).toBe(computeOrderHash(evmOrder, { name: 'Other', version: '2' }));
    expect(orderHashOf(evmOrder, { name: 'Other', version: '2' })).not.toBe(serviceHash);
    expectTypeOf<ClientOrderParams>().toEqualTypeOf<ServiceOrderParams>();
    // The unlock text a Stellar wallet signs, in ./flows without stellar-sdk: the lower-case hash, as ./stellar's.
    expect(unlockMessage(serviceHash.toUpperCase().replace('0X', '0x'))).toBe(serviceHash.toLowerCase());
    expect(() => unlockMessage('0x1234')).toThrow(/not an order hash/);
  }, 60_000);

  it('erc20ApproveTransaction is the ERC-20 approve a wallet sends before a pull, as ethers encodes it', async () => {
    const token = new Wallet(`0x${'1'.padStart(64, '0')}`).address;
    const spender = new Wallet(`0x${'2'.padStart(64, '0')}`).address;
    const erc20 = new Contract(token, ['function approve(address spender, uint256 amount) returns (bool)']);
    expect(erc20ApproveTransaction(token, spender, 12_345n)).toEqual({ to: token, data: erc20.interface.encodeFunctionData('approve', [spender, 12_345n]), value: 0n });
    expect(erc20ApproveTransaction(token, spender, 1n).data.slice(0, 10)).toBe('0x095ea7b3');
    expect(() => erc20ApproveTransaction(token, 'not an address', 1n)).toThrow();
  });

  it('spells out for dApps exactly the service\'s call types (the entry\'s calls check one way, these the other)', () => {
    expectTypeOf<EvmAction>().toEqualTypeOf<ActionName>();
    expectTypeOf<EvmTimeoutAction>().toEqualTypeOf<TimeoutAction>();
    expectTypeOf<OrderParams>().toEqualTypeOf<ServiceOrderParams>();
    expectTypeOf<EvmTransactionRequest>().toEqualTypeOf<ServiceTransaction>();
    expectTypeOf<Required<CallExtras>>().toEqualTypeOf<Required<ServiceCallExtras>>();
    // The typed client's signed responses go in as they come out.
    expectTypeOf<Schemas['CreateAdResponse']>().toMatchTypeOf<SignedResponse>();
    expectTypeOf<Schemas['FundAdResponse']>().toMatchTypeOf<SignedResponse>();
    expectTypeOf<Schemas['CreateTradeResponse']['reqContractDetails']>().toMatchTypeOf<SignedResponse>();
    expectTypeOf<Schemas['LockTradeResponse']>().toMatchTypeOf<SignedResponse>();
    expectTypeOf<Schemas['UnlockTradeResponse']>().toMatchTypeOf<SignedResponse>();
  });

  it('declares types a dApp compiles with TypeScript 5, strict and checking the declarations themselves (no skipLibCheck)', async () => {
    // The workspace's own TypeScript 5 (client/node_modules), as a dApp's build has; the repository's tsc skips .d.ts files.
    const tsc = new URL('./node_modules/.bin/tsc', import.meta.url).pathname;
    const args = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--allowImportingTsExtensions', '--lib', 'es2022,dom', 'index.d.ts', 'evm.d.ts', 'events.d.ts', 'flows.d.ts', 'execute.d.ts'];
    const { stdout } = await promisify(execFile)(tsc, args, { cwd: new URL('.', import.meta.url).pathname }).catch((error: { stdout?: string }) => ({ stdout: `failed: ${error.stdout}` }));
    expect(stdout).toBe('');
  }, 180_000); // a whole tsc run without skipLibCheck: 55 s on a quiet 2-core machine, over 60 s under load

  it('refuses at compile time the calls the server would refuse: no body, a misspelt filter, a wrong field or value', () => {
    const api = createRelayerClient('http://localhost');
    // Never called: `npm run typecheck` is the check; an @ts-expect-error that finds no error fails it.
    const refusedByTypes = () => [
      // @ts-expect-error the body is required (the server would answer 422)
      api.POST('/v1/ads/create', {}),
      // @ts-expect-error a misspelt filter
      api.GET('/v1/ads', { params: { query: { stauts: 'ACTIVE' } } }),
      // @ts-expect-error amounts are decimal strings, not numbers
      api.POST('/v1/trades/create', { body: { adId: 'a', routeId: 'r', amount: 100, bridgerDstAddress: '0x' } }),
      // @ts-expect-error a Maker sets ACTIVE or PAUSED only
      api.PATCH('/v1/ads/{id}/update', { params: { path: { id: 'a' } }, body: { status: 'EXHAUSTED' } }),
      // null clears: accepted by the types as by the server.
      api.PATCH('/v1/ads/{id}/update', { params: { path: { id: 'a' } }, body: { minAmount: null, metadata: null } }),
    ];
    expect(typeof refusedByTypes).toBe('function');
  });

  it('speaks to the service: typed reads, the error body, and the Bearer token when one is given', async () => {
    const anonymous = createRelayerClient(service.url);
    const chains = await anonymous.GET('/v1/chains', { params: { query: { limit: 5 } } });
    expect(chains.response.status).toBe(200);
    expect(chains.data).toEqual({ data: [], nextCursor: null });
    const me = await anonymous.GET('/v1/auth/me');
    expect(me.response.status).toBe(401);
    expect(me.error).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    const withToken = createRelayerClient(service.url, { accessToken: () => 'not-a-token' });
    expect((await withToken.GET('/v1/auth/me')).error?.message).toMatch(/token/i);
  });
});
