import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Address, Keypair, rpc } from '@stellar/stellar-sdk';
import { Contract, JsonRpcProvider } from 'ethers';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app/build.ts';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { readContract } from '../../devnet/stellar/client.ts';
import { EVM_DEV_ACCOUNT, STELLAR_DEV_ACCOUNT } from '../../entrypoints/dev-accounts.ts';
import { pageReady, saysDone, saysStatus } from '../support/app-page.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { installEvmWalletDouble, installFreighterDouble, type EvmDouble } from '../support/wallet-doubles.ts';

/**
 * The Done-when line of issue 31, as a person meets it: `npm start` (package.json's own command, its
 * own OS process, nothing configured but free ports and a fresh data directory) serves /app on the
 * devnet it starts (two anvil chains, the local Soroban network), and a person bridges from a
 * browser with wallet extensions (the EIP-1193/EIP-6963 and Freighter doubles, the wallets' real
 * interfaces), in both directions: the devnet's Stellar dev account makes a TUSD ad on Soroban
 * from the page and anvil's dev account bridges TUSD from anvil to Stellar through it; then an anvil
 * account's TUSD ad on anvil, and the Stellar dev account bridges TUSD from Soroban to anvil, its
 * deposit sponsored by a second Freighter account (signAuthEntry). Each trade settles with each
 * chain's balances moved by the amounts. The service's defaults (rate limits, the native prover) as they are.
 */

const root = new URL('../..', import.meta.url).pathname;
const dataParent = mkdtempSync(path.join(tmpdir(), 'relayer-app-start-'));
// PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
chmodSync(dataParent, 0o755);
let child: ChildProcess | undefined;
let url: string;
let rpcUrls: Record<string, string>;
let stellarRpc: string;
let passphrase: string;
const browsers: TestBrowser[] = [];
const wallets: EvmDouble[] = [];

/** package.json's `start` (`node <flags> entrypoints/main.ts` on Node 24: scripts/node24.sh), run with this Node. */
function startCommand(): string[] {
  const script = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start as string;
  const [node, ...args] = script.replace(/^exec sh scripts\/node24\.sh /, '').split(/\s+/);
  expect(node).toBe('node');
  return args;
}

beforeAll(async () => {
  await buildApp(); // what `npm ci` does (the root `prepare` script)
  const inherited = { ...process.env };
  for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'LOG_FORMAT', 'PROVER_BACKEND', 'METRICS_PORT', 'NODE_ENV']) delete inherited[key];
  const started = performance.now();
  child = spawn(process.execPath, startCommand(), {
    cwd: root,
    env: {
      ...inherited, PORT: '0', HOST: '127.0.0.1', DATA_DIR: path.join(dataParent, 'data'), LOG_LEVEL: 'info',
      DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET_PORT: '0', EMBEDDED_PG_PORT: String(30000 + Math.floor(Math.random() * 9000)),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = await new Promise<{ msg: string; summary: { chains: { chainId: string; rpcUrl: string }[] } }>((resolve, reject) => {
    let output = '';
    child!.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // Ready, and the local Stellar network joined (it joins a serving npm start once up).
      const line = output.split('\n').find((text) => text.includes('"msg":"ready: '));
      if (line && output.includes('"msg":"chain 148 (Stellar Devnet) joined in ')) resolve(JSON.parse(line));
    });
    child!.once('exit', (code) => reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`)));
  });
  console.log(`npm start ready in ${Math.round((performance.now() - started) / 1000)} s`);
  url = /^ready: (http:\/\/\S+)/.exec(ready.msg)![1]!;
  rpcUrls = Object.fromEntries(ready.summary.chains.filter((chain) => chain.chainId !== '148').map((chain) => [chain.chainId, chain.rpcUrl]));
  const stellarChain = await (await fetch(`${url}/v1/chains/148`)).json();
  stellarRpc = stellarChain.publicRpcUrl;
  passphrase = stellarChain.networkPassphrase;
}, 10 * 60_000);

afterAll(async () => {
  for (const wallet of wallets) wallet.close();
  for (const browser of browsers) await browser.close();
  if (child && child.exitCode === null && child.signalCode === null) {
    // Ctrl-C, as a person stops it (its database and chains stop with it); killed if it hangs.
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGINT');
    const timer = setTimeout(() => child!.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dataParent, { recursive: true, force: true });
}, 60_000);


describe('npm start serves /app on its devnet, and a person bridges from a browser with wallet extensions', () => {
  it('the page at /app (its CSP admitting the local Soroban RPC); a Stellar Maker\'s TUSD ad on Soroban made from the page; a Bridger\'s TUSD from anvil to Stellar through it, SETTLED, each chain\'s balances moved', async () => {
    const page = await fetch(`${url}/app/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(new RegExp(`connect-src 'self' http://${new URL(stellarRpc).host.replace(/\./g, '\\.')}`));
    const orderChain = '31337';
    const routes = (await (await fetch(`${url}/v1/routes?adChainId=148&orderChainId=${orderChain}`)).json()).data;
    const route = routes.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD');
    const stellarTusd = route.adToken.address as string;
    const evmTusd = new Contract(route.orderToken.address, ['function balanceOf(address) view returns (uint256)'], new JsonRpcProvider(rpcUrls[orderChain], undefined, { staticNetwork: true }));
    const server = new rpc.Server(stellarRpc, { allowHttp: true });
    const stellarTusdOf = (holder: string) => readContract(server, passphrase, STELLAR_DEV_ACCOUNT.publicKey(), stellarTusd, 'balance', [new Address(holder).toScVal()]);
    const network = { name: 'STANDALONE', passphrase };

    // The Maker: the devnet's Stellar dev account in Freighter, paid on anvil at anvil's account 2.
    const makerPayee = anvilAccounts(3)[2]!;
    const bridgerStellar = Keypair.random(); // where the Bridger is paid: a SEP-41 token needs no account there
    const makerSide = await launchBrowser();
    const bridgerSide = await launchBrowser();
    browsers.push(makerSide, bridgerSide);
    const maker = makerSide.page;
    const bridger = bridgerSide.page;
    wallets.push(await installEvmWalletDouble(maker, makerPayee.privateKey, rpcUrls, orderChain));
    wallets.push(await installEvmWalletDouble(bridger, EVM_DEV_ACCOUNT.privateKey, rpcUrls, orderChain));
    const makerFreighter = await installFreighterDouble(maker, STELLAR_DEV_ACCOUNT, network);
    await installFreighterDouble(bridger, bridgerStellar, network);
    const open = async (on: Page, view: string) => {
      await on.goto(`${url}/app/#/${view}`);
      await pageReady(on);
    };

    await open(maker, 'maker');
    await maker.getByRole('button', { name: 'Connect Freighter' }).click();
    await maker.getByRole('button', { name: 'Sign in with Stellar' }).click();
    await saysDone(maker, 'Sign in with Stellar');
    await maker.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await maker.locator('[data-field=evm-address]').waitFor();
    await maker.selectOption('#create-route', route.id);
    await maker.fill('#create-fund', '5');
    await maker.getByRole('button', { name: 'Create ad' }).click();
    await saysDone(maker, 'Create ad', 120_000);
    const card = maker.locator('article.ad').first();
    await card.waitFor();
    const adId = (await card.getAttribute('data-ad-id'))!;
    expect(await card.locator('[data-field=available]').textContent()).toBe('5 TUSD');

    // The Bridger: SIWE with anvil's dev account, Freighter for the Stellar payout; 1 TUSD from anvil.
    await open(bridger, 'bridge');
    await bridger.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await bridger.getByRole('button', { name: 'Sign in with Ethereum' }).click();
    await saysDone(bridger, 'Sign in with Ethereum');
    await bridger.getByRole('button', { name: 'Connect Freighter' }).click();
    await bridger.locator('[data-field=stellar-address]').waitFor();
    await bridger.selectOption('#bridge-route', route.id);
    await bridger.fill('#bridge-amount', '1');
    await bridger.getByRole('button', { name: 'Get a quote' }).click();
    await saysDone(bridger, 'Quote');
    expect(await bridger.locator('[data-field=ad]').textContent()).toBe(adId);
    const bridgerEvmBefore = (await evmTusd.getFunction('balanceOf')(EVM_DEV_ACCOUNT.address)) as bigint;
    await bridger.getByRole('button', { name: 'Bridge' }).click();
    // The page's executeTrade: approve, create, deposit on anvil, confirm; then the lock awaited.
    await saysStatus(bridger, 'Waiting for the Maker\'s lock.', 'executeTrade waiting for the lock after the deposit', 120_000);
    const tradeId = (await bridger.locator('[data-field=trade-id]').textContent())!;
    expect(await evmTusd.getFunction('balanceOf')(EVM_DEV_ACCOUNT.address)).toBe(bridgerEvmBefore - 1_000_000n);

    // The Maker locks on Soroban and, once the proof is ready, unlocks there (Freighter), paying the Bridger.
    const row = maker.locator(`tr[data-trade-id="${tradeId}"]`);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 30_000 }).toBe('your lock');
    await row.getByRole('button', { name: 'Lock' }).click();
    await saysDone(maker, `Lock (ad ${adId.slice(0, 8)})`, 120_000);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 400_000, interval: 2_000 }).toBe('your unlock (pays the Bridger)');
    await row.getByRole('button', { name: 'Unlock' }).click();
    await saysDone(maker, `Unlock (ad ${adId.slice(0, 8)})`, 120_000);
    expect(makerFreighter.signed).toHaveLength(1);
    expect(await stellarTusdOf(bridgerStellar.publicKey())).toBe(10_000_000n);

    // The Bridger's unlock on anvil (executeTrade, once due) pays the Maker; SETTLED in both views.
    const payeeBefore = (await evmTusd.getFunction('balanceOf')(makerPayee.address)) as bigint;
    await saysDone(bridger, 'Bridge', 120_000);
    await expect.poll(() => bridger.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('SETTLED');
    expect(await evmTusd.getFunction('balanceOf')(makerPayee.address)).toBe(payeeBefore + 1_000_000n);
    await expect.poll(() => row.locator('.label').textContent(), { timeout: 30_000 }).toBe('Settled');
    expect(await card.locator('[data-field=available]').textContent()).toBe('4 TUSD');
    (evmTusd.runner as JsonRpcProvider).destroy();
  }, 900_000);

  it('the other way: an EVM Maker\'s TUSD ad on anvil made from the page; the Stellar dev account bridges TUSD from Soroban to anvil through it, its deposit sponsored ("Fees paid by": Freighter signs its authorisation entry with signAuthEntry, a second account pays); SETTLED, each chain\'s balances moved', async () => {
    const adChain = '31337';
    const routes = (await (await fetch(`${url}/v1/routes?adChainId=${adChain}&orderChainId=148`)).json()).data;
    const route = routes.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD');
    const xlm = (await (await fetch(`${url}/v1/routes?adChainId=148&orderChainId=${adChain}`)).json()).data.find((r: any) => r.adToken.symbol === 'XLM').adToken.address as string;
    const stellarTusd = route.orderToken.address as string;
    const evmTusd = new Contract(route.adToken.address, ['function balanceOf(address) view returns (uint256)'], new JsonRpcProvider(rpcUrls[adChain], undefined, { staticNetwork: true }));
    const server = new rpc.Server(stellarRpc, { allowHttp: true });
    const balanceOf = (token: string, holder: string) => readContract(server, passphrase, STELLAR_DEV_ACCOUNT.publicKey(), token, 'balance', [new Address(holder).toScVal()]);
    const network = { name: 'STANDALONE', passphrase };
    // The fee payer: a second account in the Bridger's Freighter, funded by the network's friendbot.
    const feePayer = Keypair.random();
    expect((await fetch(`${stellarRpc}/friendbot?addr=${feePayer.publicKey()}`)).ok).toBe(true);

    const [, , makerKey, bridgerPayee] = anvilAccounts(4);
    const makerStellarPayee = Keypair.random();
    const makerSide = await launchBrowser();
    const bridgerSide = await launchBrowser();
    browsers.push(makerSide, bridgerSide);
    const maker = makerSide.page;
    const bridger = bridgerSide.page;
    wallets.push(await installEvmWalletDouble(maker, makerKey!.privateKey, rpcUrls, adChain));
    wallets.push(await installEvmWalletDouble(bridger, bridgerPayee!.privateKey, rpcUrls, adChain));
    await installFreighterDouble(maker, makerStellarPayee, network);
    const bridgerFreighter = await installFreighterDouble(bridger, STELLAR_DEV_ACCOUNT, network, [feePayer]);
    const open = async (on: Page, view: string) => {
      await on.goto(`${url}/app/#/${view}`);
      await pageReady(on);
    };

    await open(maker, 'maker');
    await maker.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await maker.getByRole('button', { name: 'Sign in with Ethereum' }).click();
    await saysDone(maker, 'Sign in with Ethereum');
    await maker.getByRole('button', { name: 'Connect Freighter' }).click();
    await maker.locator('[data-field=stellar-address]').waitFor();
    await maker.selectOption('#create-route', route.id);
    await maker.fill('#create-fund', '5');
    await maker.getByRole('button', { name: 'Create ad' }).click();
    await saysDone(maker, 'Create ad', 120_000);
    const card = maker.locator('article.ad').first();
    await card.waitFor();
    const adId = (await card.getAttribute('data-ad-id'))!;
    expect(await card.locator('[data-field=available]').textContent()).toBe('5 TUSD');

    await open(bridger, 'bridge');
    await bridger.getByRole('button', { name: 'Connect Freighter' }).click();
    await bridger.getByRole('button', { name: 'Sign in with Stellar' }).click();
    await saysDone(bridger, 'Sign in with Stellar');
    await bridger.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await bridger.locator('[data-field=evm-address]').waitFor();
    await bridger.fill('#stellar-fee-payer', feePayer.publicKey());
    await bridger.locator('#stellar-fee-payer').press('Tab');
    await bridger.selectOption('#bridge-route', route.id);
    await bridger.fill('#bridge-amount', '1');
    await bridger.getByRole('button', { name: 'Get a quote' }).click();
    await saysDone(bridger, 'Quote');
    expect(await bridger.locator('[data-field=ad]').textContent()).toBe(adId);
    const before = { tusd: await balanceOf(stellarTusd, STELLAR_DEV_ACCOUNT.publicKey()), xlm: await balanceOf(xlm, STELLAR_DEV_ACCOUNT.publicKey()), payer: await balanceOf(xlm, feePayer.publicKey()) };
    await bridger.getByRole('button', { name: 'Bridge' }).click();
    // The page's executeTrade with its fee payer: the deposit from the fee payer's account, confirmed, then the lock awaited.
    await saysStatus(bridger, 'Waiting for the Maker\'s lock.', 'executeTrade waiting for the lock after the sponsored deposit', 120_000);
    const tradeId = (await bridger.locator('[data-field=trade-id]').textContent())!;
    expect(bridgerFreighter.authEntries).toEqual([STELLAR_DEV_ACCOUNT.publicKey()]);
    expect(bridgerFreighter.envelopes.at(-1)).toBe(feePayer.publicKey());
    expect(await balanceOf(stellarTusd, STELLAR_DEV_ACCOUNT.publicKey())).toBe(before.tusd - 10_000_000n);
    expect(await balanceOf(xlm, STELLAR_DEV_ACCOUNT.publicKey())).toBe(before.xlm); // the fee payer paid
    expect(await balanceOf(xlm, feePayer.publicKey())).toBeLessThan(before.payer);

    // The Maker locks and unlocks on anvil (its EVM wallet), paying the Bridger there.
    const row = maker.locator(`tr[data-trade-id="${tradeId}"]`);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 30_000 }).toBe('your lock');
    await row.getByRole('button', { name: 'Lock' }).click();
    await saysDone(maker, `Lock (ad ${adId.slice(0, 8)})`, 120_000);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 400_000, interval: 2_000 }).toBe('your unlock (pays the Bridger)');
    const payeeBefore = (await evmTusd.getFunction('balanceOf')(bridgerPayee!.address)) as bigint;
    await row.getByRole('button', { name: 'Unlock' }).click();
    await saysDone(maker, `Unlock (ad ${adId.slice(0, 8)})`, 120_000);
    expect(await evmTusd.getFunction('balanceOf')(bridgerPayee!.address)).toBe(payeeBefore + 1_000_000n);

    // The Bridger's unlock on Soroban follows at once (signMessage, the transaction from the fee payer) and pays the Maker; SETTLED.
    await saysDone(bridger, 'Bridge', 120_000);
    expect(bridgerFreighter.envelopes.at(-1)).toBe(feePayer.publicKey());
    expect(await balanceOf(xlm, STELLAR_DEV_ACCOUNT.publicKey())).toBe(before.xlm);
    await expect.poll(() => bridger.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('SETTLED');
    expect(await balanceOf(stellarTusd, makerStellarPayee.publicKey())).toBe(10_000_000n);
    await expect.poll(() => row.locator('.label').textContent(), { timeout: 30_000 }).toBe('Settled');
    expect(await card.locator('[data-field=available]').textContent()).toBe('4 TUSD');
    expect(await bridger.locator('[data-field=final-balance]').textContent({ timeout: 30_000 }))
      .toBe(`${Number((await evmTusd.getFunction('balanceOf')(bridgerPayee!.address)) as bigint) / 1e6} TUSD`);
    (evmTusd.runner as JsonRpcProvider).destroy();
  }, 900_000);
});
