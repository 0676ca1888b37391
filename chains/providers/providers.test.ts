import { Writable } from 'node:stream';
import { JsonRpcProvider, Wallet } from 'ethers';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { startRpcFaultProxy, type RpcFaultProxy } from '../../test/support/rpc-fault-proxy.ts';
import { evmAdapter } from '../evm/adapter.ts';
import { ChainFactsDisagreeError, ChainUnavailableError } from '../errors.ts';
import { providerMetrics } from './metrics.ts';
import { noProviderObserver, type ProviderObserver } from './observer.ts';
import { createProviders } from './providers.ts';

/**
 * One anvil chain seen through JSON-RPC proxies (test/support/rpc-fault-proxy.ts) that can be down,
 * slow, 100 blocks behind or lying about a real receipt: what is acted upon is what the quorum of
 * providers agrees on, and nothing else.
 */

const API_KEY = 'sk-live-0123456789abcdef';
let anvil: AnvilInstance;
let txHash: string;
const proxies: RpcFaultProxy[] = [];

async function proxy(mode: RpcFaultProxy['mode'] = 'honest'): Promise<RpcFaultProxy> {
  const started = await startRpcFaultProxy(anvil.rpcUrl, { mode, apiKey: API_KEY });
  // A receipt whose status is flipped: a failed transaction told as a success, or the reverse.
  started.lies.eth_getTransactionReceipt = (receipt: { status: string }) => ({ ...receipt, status: receipt.status === '0x1' ? '0x0' : '0x1' });
  proxies.push(started);
  return started;
}

/** Whether the receipt says success, as the quorum of `urls` agrees. */
const receiptStatus = (web3: Web3) => web3.eth.getTransactionReceipt(txHash).then((receipt) => String(receipt.status));

function providersOf(urls: string[], options: { observer?: ProviderObserver; quorum?: number; stallMs?: number; refreshMs?: number; chainId?: string } = {}) {
  return createProviders({
    chainId: options.chainId ?? '41041', kindLabel: 'evm', urls, quorum: options.quorum, connect: evmAdapter.connect, head: evmAdapter.head,
    maxHeadLagBlocks: 20, stallMs: options.stallMs ?? 2_000, refreshMs: options.refreshMs ?? 0, observer: options.observer ?? noProviderObserver,
  });
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 41_041 });
  const provider = new JsonRpcProvider(anvil.rpcUrl);
  const sender = new Wallet(anvilAccounts(1)[0]!.privateKey, provider);
  const sent = await sender.sendTransaction({ to: Wallet.createRandom().address, value: 1n });
  txHash = sent.hash;
  await sent.wait();
  // A chain long enough for a provider to be 100 blocks behind it.
  await provider.send('anvil_mine', ['0x96']);
  provider.destroy();
}, 60_000);

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await anvil?.stop();
});

describe('facts the books act on', () => {
  it('are acted upon when two honest providers agree, though the first-ranked one flips the receipt\'s status; the disagreement is counted and logged with every answer', async () => {
    const [liar, a, b] = [await proxy('lie'), await proxy('slow'), await proxy('slow')];
    // The honest ones answer a little later: the liar ranks first and is among the quorum asked.
    a.slowMs = 300;
    b.slowMs = 300;
    const seen: Parameters<ProviderObserver['disagreement']>[0][] = [];
    const providers = providersOf([liar.url, a.url, b.url], { observer: { ...noProviderObserver, disagreement: (event) => seen.push(event) } });
    expect(await providers.fact('receipt', receiptStatus)).toBe('1');
    expect(liar.counts.lies).toBeGreaterThan(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ chainId: '41041', method: 'receipt', resolved: true });
    expect(seen[0]!.answers.map((answer) => answer.answer).sort()).toEqual(['value:"0"', 'value:"1"', 'value:"1"']);
  });

  it('are not held up by a slow provider once the quorum agrees: the liar answers first, an honest pair decides, the slow one is not waited for', async () => {
    const [liar, a, b, slow] = [await proxy('lie'), await proxy('slow'), await proxy('slow'), await proxy('slow')];
    // Ranked liar, then the honest pair, then the slow one: the liar and one honest are asked first, then the rest.
    a.slowMs = 300;
    b.slowMs = 300;
    slow.slowMs = 1_500;
    const providers = providersOf([liar.url, a.url, b.url, slow.url], { quorum: 2, refreshMs: 600_000 });
    await providers.health();
    slow.slowMs = 10_000;
    const started = performance.now();
    expect(await providers.fact('receipt', receiptStatus)).toBe('1');
    expect(liar.counts.lies).toBeGreaterThan(0);
    expect(performance.now() - started, 'the fact decided without the slow provider').toBeLessThan(slow.slowMs / 2);
  });

  it('are not acted upon when no answer reaches the quorum: CHAIN_FACTS_DISAGREE, retryable', async () => {
    const [a, liar] = [await proxy(), await proxy('lie')];
    const error = await providersOf([a.url, liar.url]).fact('receipt', receiptStatus).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainFactsDisagreeError);
    expect(error).toMatchObject({ code: 'CHAIN_FACTS_DISAGREE', retryable: true });
  });

  it('are read from the providers that answer: one down is passed over; below the quorum the chain is CHAIN_UNAVAILABLE, and it recovers by itself', async () => {
    const [down, a, b] = [await proxy('down'), await proxy(), await proxy()];
    expect(await providersOf([down.url, a.url, b.url]).fact('receipt', receiptStatus)).toBe('1');

    const [down2, c] = [await proxy('down'), await proxy()];
    const outage = providersOf([down2.url, c.url]);
    const error = await outage.fact('receipt', receiptStatus).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainUnavailableError);
    expect(error).toMatchObject({ code: 'CHAIN_UNAVAILABLE', retryable: true });
    expect((error as ChainUnavailableError).retryAfterSeconds).toBeGreaterThan(0);
    expect((await outage.health()).degraded).toBe(true);
    down2.mode = 'honest';
    expect(await outage.fact('receipt', receiptStatus)).toBe('1');
    expect(await outage.health()).toMatchObject({ degraded: false, usable: 2, quorum: 2 });
  });

  it('skip a provider 100 blocks behind until it catches up', async () => {
    const [behind, a, b] = [await proxy('behind'), await proxy(), await proxy()];
    const providers = providersOf([behind.url, a.url, b.url]);
    const health = await providers.health();
    expect(health.providers.map((p) => p.lag)).toEqual(['100', '0', '0']);
    expect(health.usable).toBe(2);
    const before = behind.counts.requests.eth_getTransactionReceipt ?? 0;
    expect(await providers.fact('receipt', receiptStatus)).toBe('1');
    expect(behind.counts.requests.eth_getTransactionReceipt ?? 0).toBe(before);
    behind.mode = 'honest';
    expect((await providers.health()).usable).toBe(3);
  });
});

describe('other reads', () => {
  it('fail over from a provider that is down, and ask the next one when the first stalls', async () => {
    const [down, a] = [await proxy('down'), await proxy()];
    expect(await providersOf([down.url, a.url]).read('blockNumber', (web3) => web3.eth.getBlockNumber())).toBeGreaterThan(0n);

    const [slow, b] = [await proxy(), await proxy()];
    // Heads probed once while both answer; then the first-ranked one stalls for longer than the test.
    const providers = providersOf([slow.url, b.url], { stallMs: 100, refreshMs: 600_000 });
    await providers.health();
    slow.slowMs = 120_000;
    slow.mode = 'slow';
    const before = b.counts.requests.eth_chainId ?? 0;
    expect(await providers.read('chainId', (web3) => web3.eth.getChainId())).toBe(41_041n);
    expect(b.counts.requests.eth_chainId).toBe(before + 1);
  });
});

describe('head probes', () => {
  it('hold up no read for longer than the stall timeout when a provider is slow to tell its head', async () => {
    const [a, slow] = [await proxy(), await proxy()];
    const providers = providersOf([a.url, slow.url], { stallMs: 200, refreshMs: 0 });
    await providers.health();
    slow.slowMs = 5_000;
    slow.mode = 'slow';
    const started = performance.now();
    expect(await providers.read('blockNumber', (web3) => web3.eth.getBlockNumber())).toBeGreaterThan(0n);
    expect(performance.now() - started, 'a read after a head refresh').toBeLessThan(slow.slowMs / 2);
    slow.mode = 'honest';
  });

  it('wait no more for a provider known to be slower than the stall timeout: its head is asked in the background', async () => {
    const [a, slow] = [await proxy(), await proxy('slow')];
    slow.slowMs = 2_000;
    const providers = providersOf([a.url, slow.url], { stallMs: 1_500, refreshMs: 0 });
    // Its first answer comes after the stall timeout: from then on it is known to be slow.
    let seen = await providers.health();
    for (let i = 0; i < 10 && seen.providers[1]!.head === null; i++) seen = await providers.health();
    expect(seen.providers[1]!.head, 'the slow provider\'s head, once it answered').not.toBeNull();
    const started = performance.now();
    expect(await providers.read('blockNumber', (web3) => web3.eth.getBlockNumber())).toBeGreaterThan(0n);
    expect(performance.now() - started, 'a read after a head refresh').toBeLessThan(750);
  });

  it('do not make a chain look degraded on its health for one provider slow to answer: it is shown as last seen', async () => {
    const [a, b, slow] = [await proxy(), await proxy(), await proxy()];
    const providers = providersOf([a.url, b.url, slow.url], { refreshMs: 0 });
    expect(await providers.health()).toMatchObject({ usable: 3, degraded: false });
    slow.slowMs = 5_000;
    slow.mode = 'slow';
    const started = performance.now();
    expect(await providers.health(300)).toMatchObject({ usable: 3, degraded: false });
    expect(performance.now() - started).toBeLessThan(slow.slowMs / 2);
    slow.mode = 'honest';
  });
});

describe('provider URLs', () => {
  it('never appear in a log line, a metric label or an error: providers are named by host (and position)', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }));
    const registry = new Registry();
    const observer = providerMetrics(registry, logger);
    const [down, liar, a] = [await proxy('down'), await proxy('lie'), await proxy()];
    const errors: unknown[] = [];
    errors.push(await providersOf([down.url, liar.url], { observer, chainId: '1' }).fact('receipt', receiptStatus).catch((e: unknown) => e));
    errors.push(await providersOf([liar.url, a.url], { observer, chainId: '2' }).fact('receipt', receiptStatus).catch((e: unknown) => e));
    const metrics = await registry.metrics();

    expect(errors.every((e) => e instanceof Error)).toBe(true);
    expect(lines.length).toBeGreaterThan(0);
    expect(metrics).toContain('relayer_rpc_disagreements_total{chain="2",method="receipt",resolved="false"} 1');
    expect(metrics).toContain('relayer_rpc_provider_up{chain="1",provider="127.0.0.1#0"} 0');
    expect(metrics).toMatch(/relayer_rpc_requests_total\{chain="2",provider="127\.0\.0\.1#1",method="receipt",result="ok"\} \d/);
    const said = [...lines, metrics, ...errors.map((e) => `${(e as Error).message} ${String((e as Error).cause ?? '')}`)].join('\n');
    for (const secret of [API_KEY, '/v3/', 'apikey', ...[down, liar, a].map((p) => new URL(p.url).port)]) expect(said).not.toContain(secret);
  });
});
