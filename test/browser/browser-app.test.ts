import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app/build.ts';
import { AD_CHAIN, devnetClient, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { pageReady, saysDone, saysStatus, statusText } from '../support/app-page.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { installEvmWalletDouble, installFreighterDouble, type EvmDouble, type EvmDoubleControls } from '../support/wallet-doubles.ts';
import { call } from '../support/wallets.ts';

/**
 * The page at /app (app/) in Debian's Chromium against the devnet: a Maker and a Bridger, each in
 * their own browser with a wallet double (EIP-1193 over EIP-6963, a devnet key in this process), do
 * everything through the page: sign in with SIWE, create and fund an ad, quote, bridge, lock, both
 * unlocks, and follow the trade live to SETTLED; the balances the page shows are the chain's; axe-core
 * finds no serious accessibility violation in either view.
 */

const { makerKey, bridgerKey } = tradeParties();
/**
 * The deposit request lives 60 s and the lock deadline comes 120 s after creation (lockExpiry 3720 s
 * less the contracts' hour), so the last test's trade, never locked, expires within minutes; the
 * other trades are locked well before.
 */
const SHORT_LOCK_WINDOW = { TRADE_RESERVATION_TTL_SECONDS: '60', ORDER_LOCK_EXPIRY_SECONDS: '3720' };
let service: TestService;
let devnet: DevnetClient;
let makerBrowser: TestBrowser;
let bridgerBrowser: TestBrowser;
let makerWallet: EvmDouble;
let bridgerWallet: EvmDouble;
let routeId: string;
let adManager: string;

beforeAll(async () => {
  await buildApp();
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', ...SHORT_LOCK_WINDOW });
  devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  const routes = (await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`)).body.data;
  routeId = routes.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
  adManager = (await call(service, 'GET', `/v1/chains/${AD_CHAIN}`)).body.adManagerAddress;
  makerBrowser = await launchBrowser();
  bridgerBrowser = await launchBrowser();
  // Each wallet starts on the other chain than its first transaction: the page has it switch.
  makerWallet = await installEvmWalletDouble(makerBrowser.page, makerKey!.privateKey, service.devnet!.rpcUrls, ORDER_CHAIN);
  bridgerWallet = await installEvmWalletDouble(bridgerBrowser.page, bridgerKey!.privateKey, service.devnet!.rpcUrls, AD_CHAIN);
}, 240_000);

afterAll(async () => {
  makerWallet?.close();
  bridgerWallet?.close();
  await makerBrowser?.close();
  await bridgerBrowser?.close();
  devnet?.close();
  await service?.close();
});


async function signIn(page: Page, wallet: EvmDoubleControls, view: string): Promise<void> {
  await page.goto(`${service.url}/app/#/${view}`);
  await pageReady(page);
  const timings = await page.evaluate(() => ({
    firstContentfulPaintMs: Math.round(performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1),
    readyMs: Math.round(performance.getEntriesByName('app-ready')[0]?.startTime ?? -1),
  }));
  console.log(`/app/#/${view} first load: ${JSON.stringify(timings)}`);
  expect(timings.readyMs).toBeGreaterThan(0);
  await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
  await page.getByRole('button', { name: 'Sign in with Ethereum' }).waitFor();
  // A person who refuses the signature: said, nothing happens.
  wallet.rejectNext = true;
  await page.getByRole('button', { name: 'Sign in with Ethereum' }).click();
  await saysStatus(page, 'Sign in with Ethereum failed: You rejected the request in your wallet: nothing was signed or sent.', 'the refused SIWE signature said');
  await page.getByRole('button', { name: 'Sign in with Ethereum' }).click();
  await saysDone(page, 'Sign in with Ethereum');
  await page.locator('[data-field=signed-in]').waitFor();
}

/**
 * axe-core's serious and critical violations on the page as it is (its source evaluated through the
 * DevTools protocol: the page's CSP admits no inline script, and needs not to).
 */
async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axe);
  return page.evaluate(async () => {
    const result = await (globalThis as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')) }));
  });
}

/** With APP_SCREENSHOTS=1, the views as app/README.md shows them. */
async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.APP_SCREENSHOTS) await page.screenshot({ path: new URL(`../../app/screenshots/${name}.png`, import.meta.url).pathname, fullPage: true });
}

/**
 * The Bridger on a fresh page, as on another device: the page's storage emptied (no trade record,
 * no session), signed in again with SIWE, the trade found by its id with "Find a trade".
 */
async function findOnFreshPage(page: Page, tradeId: string): Promise<void> {
  await page.evaluate(() => localStorage.clear());
  await page.goto(`${service.url}/app/#/bridge`);
  await page.reload();
  await pageReady(page);
  expect(await page.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('relayer.execute.')).length)).toBe(0);
  await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
  await page.getByRole('button', { name: 'Sign in with Ethereum' }).click();
  await saysDone(page, 'Sign in with Ethereum');
  await page.fill('#trade-lookup', tradeId);
  await page.getByRole('button', { name: 'Find', exact: true }).click();
  await saysDone(page, 'Find the trade');
  expect(await page.locator('[data-field=trade-id]').textContent()).toBe(tradeId);
}

const field = (page: Page, adId: string, name: string) => page.locator(`article[data-ad-id="${adId}"] [data-field=${name}]`).first();

describe('the page at /app, driven through wallet doubles in headless Chromium', () => {
  let adId: string;

  it('a Maker signs in with SIWE, creates and funds an ad on EVM, and sees the balances move (equal to the chain\'s)', async () => {
    const page = makerBrowser.page;
    await signIn(page, makerWallet, 'maker');
    await page.selectOption('#create-route', routeId);
    await page.fill('#create-fund', '10');
    await page.fill('#create-max', '5');
    await page.getByRole('button', { name: 'Create ad' }).click();
    await saysDone(page, 'Create ad');
    const card = page.locator('article.ad').first();
    await card.waitFor();
    adId = (await card.getAttribute('data-ad-id'))!;
    expect(await field(page, adId, 'available').textContent()).toBe('10 TUSD');
    expect(await field(page, adId, 'label').textContent()).toBe('Active');
    expect(await devnet.balanceOf(AD_CHAIN, adManager)).toBe(10_000_000n);

    await card.locator('input[name=amount]').fill('2.5');
    await card.getByRole('button', { name: 'Fund' }).click();
    await saysDone(page, `Fund (ad ${adId.slice(0, 8)})`);
    await expect.poll(() => field(page, adId, 'pool').textContent()).toBe('12.5 TUSD');
    expect(await field(page, adId, 'available').textContent()).toBe('12.5 TUSD');
    expect(await field(page, adId, 'locked').textContent()).toBe('0 TUSD');
    expect(await devnet.balanceOf(AD_CHAIN, adManager)).toBe(12_500_000n);
  }, 180_000);

  it('a Bridger quotes and bridges through the page (the client\'s executeTrade, its progress on the status line), and both pages follow the trade live to SETTLED (no serious axe-core violation in either view)', async () => {
    const page = bridgerBrowser.page;
    const maker = makerBrowser.page;
    await signIn(page, bridgerWallet, 'bridge');
    await page.selectOption('#bridge-route', routeId);
    await page.fill('#bridge-amount', '1');
    await page.getByRole('button', { name: 'Get a quote' }).click();
    await saysDone(page, 'Quote');
    expect(await page.locator('[data-field=deposit]').textContent()).toMatch(/^1 TUSD/);
    expect(await page.locator('[data-field=receive]').textContent()).toMatch(/^1 TUSD/);
    expect(await page.locator('[data-field=ad]').textContent()).toBe(adId);
    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridgerWallet.wallet.address);
    const makerBalanceBefore = await devnet.balanceOf(ORDER_CHAIN, makerWallet.wallet.address);
    await page.getByRole('button', { name: 'Bridge' }).click();
    // executeTrade approves, creates, deposits and confirms; its progress events feed the status line.
    await saysStatus(page, 'Waiting for the Maker\'s lock.', 'executeTrade waiting for the lock after the deposit', 120_000);
    const tradeId = (await page.locator('[data-field=trade-id]').textContent())!;
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('DEPOSITED');
    // The run is kept in the page's store (localStorage) under its key, with the deposit's hash: what a reload resumes.
    const kept = await page.evaluate((id) => Object.keys(localStorage).filter((key) => key.startsWith('relayer.execute.'))
      .map((key) => JSON.parse(localStorage.getItem(key)!)).find((record) => record.tradeId === id), tradeId);
    const depositTx = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body.transactions.find((tx: any) => tx.step === 'deposit').txHash;
    expect(kept.tx.deposit).toBe(depositTx);

    // The Maker's page learns of it over the event stream (no reload): the trade awaits the lock.
    const row = maker.locator(`tr[data-trade-id="${tradeId}"]`);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 30_000 }).toBe('your lock');
    await row.getByRole('button', { name: 'Lock' }).click();
    await saysDone(maker, `Lock (ad ${adId.slice(0, 8)})`, 120_000);
    await expect.poll(() => field(maker, adId, 'locked').textContent(), { timeout: 30_000 }).toBe('1 TUSD');
    expect(await field(maker, adId, 'available').textContent()).toBe('11.5 TUSD');
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('LOCKED');

    // The proof (a few minutes on a shared machine): the Maker's unlock becomes due, one click.
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 400_000, interval: 2_000 }).toBe('your unlock (pays the Bridger)');
    await row.getByRole('button', { name: 'Unlock' }).click();
    await saysDone(maker, `Unlock (ad ${adId.slice(0, 8)})`, 120_000);
    expect(await devnet.balanceOf(AD_CHAIN, bridgerWallet.wallet.address)).toBe(bridgerBefore + 1_000_000n);

    // The Bridger's unlock (pays the Maker): executeTrade signs and sends it once due (the wallet asks); the trade settles.
    await saysDone(page, 'Bridge', 180_000);
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('SETTLED');
    expect(await devnet.balanceOf(ORDER_CHAIN, makerWallet.wallet.address)).toBe(makerBalanceBefore + 1_000_000n);
    const shown = await page.locator('[data-field=final-balance]').textContent({ timeout: 30_000 });
    const onChain = await devnet.balanceOf(AD_CHAIN, bridgerWallet.wallet.address);
    expect(shown).toBe(`${Number(onChain / 1_000_000n)}${onChain % 1_000_000n ? `.${(onChain % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '')}` : ''} TUSD`);
    await expect.poll(() => row.locator('.label').textContent(), { timeout: 30_000 }).toBe('Settled');
    // The pool is what was put in (12.5); 1 of it paid out to the Bridger: 11.5 available, what the AdManager holds.
    await expect.poll(() => field(maker, adId, 'locked').textContent(), { timeout: 30_000 }).toBe('0 TUSD');
    expect(await field(maker, adId, 'pool').textContent()).toBe('12.5 TUSD');
    expect(await field(maker, adId, 'available').textContent()).toBe('11.5 TUSD');
    expect(await devnet.balanceOf(AD_CHAIN, adManager)).toBe(11_500_000n);

    // After a reload the trade is found again (the address keeps it), and by its order hash.
    expect(await seriousViolations(maker)).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(maker, 'maker');
    await screenshot(page, 'bridge');
    await page.reload();
    await pageReady(page);
    await expect.poll(() => page.locator('[data-field=trade-id]').textContent(), { timeout: 30_000, message: 'the reloaded page following the trade the address names' }).toBe(tradeId);
    const orderHash = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body.orderHash;
    await page.goto(`${service.url}/app/#/bridge`);
    await page.evaluate(() => localStorage.removeItem('relayer.trade'));
    await page.reload();
    await pageReady(page);
    await page.fill('#trade-lookup', orderHash);
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => page.locator('[data-field=trade-id]').textContent(), { timeout: 30_000, message: 'the trade found by its order hash' }).toBe(tradeId);
  }, 900_000);

  it('loses nothing to a reload between a transaction and its confirmation: the page confirms it when it loads again', async () => {
    const page = makerBrowser.page;
    await page.goto(`${service.url}/app/#/maker`);
    await page.reload();
    await pageReady(page);
    await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    const card = page.locator(`article[data-ad-id="${adId}"]`);
    await expect.poll(() => field(page, adId, 'pool').textContent(), { timeout: 30_000 }).toBe('12.5 TUSD');
    const sentBefore = makerWallet.sent.length;
    // The approve is mined; the fundAd's receipt is held until the page is gone: the page that sent it
    // cannot confirm it itself (released earlier, it did, and the reloaded page had nothing left to confirm).
    makerWallet.holdReceiptsFrom = sentBefore + 1;
    let fundAd = '';
    try {
      await card.locator('input[name=amount]').fill('1');
      await card.getByRole('button', { name: 'Fund' }).click();
      await expect.poll(() => makerWallet.sent.length, { timeout: 30_000, message: 'the wallet double sending the approve and the fundAd' }).toBe(sentBefore + 2);
      fundAd = makerWallet.sent.at(-1)!;
      // The page has the hash (kept for the next load, and said), not only the wallet: the reload comes now.
      await saysStatus(page, `Sent ${fundAd.slice(0, 10)}…: waiting for the chain to include it, then confirming it to the service.`, 'the page holding the fundAd\'s hash');
      expect(await devnet.balanceOf(AD_CHAIN, adManager)).toBe(12_500_000n); // on chain already
      expect(await field(page, adId, 'pool').textContent()).toBe('12.5 TUSD'); // not confirmed to the service yet
      await page.reload();
    } finally {
      makerWallet.holdReceiptsFrom = undefined;
    }
    await saysStatus(page, `Confirmed the transaction ${fundAd.slice(0, 10)}… sent before the page was reloaded.`, 'the reloaded page confirming the fundAd sent before the reload');
    await expect.poll(() => field(page, adId, 'pool').textContent(), { timeout: 30_000 }).toBe('13.5 TUSD');
    expect(await field(page, adId, 'available').textContent()).toBe('12.5 TUSD');
  }, 90_000);

  it('names a wallet that will not switch to the needed chain, before anything is asked of the API', async () => {
    const page = makerBrowser.page;
    makerWallet.switchTo(ORDER_CHAIN);
    makerWallet.refuseSwitch = true;
    const adsBefore = Number((await service.knex('ads').count('* as count'))[0]!.count);
    try {
      await page.goto(`${service.url}/app/#/maker`);
      await page.reload(); // a new page load (goto to the same address but its hash keeps the document)
      await pageReady(page);
      await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
      await page.locator('[data-field=evm-address]').waitFor();
      await page.selectOption('#create-route', routeId);
      await page.fill('#create-fund', '1');
      await page.getByRole('button', { name: 'Create ad' }).click();
      await saysStatus(page, /^Create ad failed: /, 'the create refused for the wallet\'s chain');
      expect(await statusText(page)).toMatch(/^Create ad failed: Your wallet is on chain 31337, and this step needs .+ \(chain 31338\)\. Switch networks in Test wallet \(double\)\.$/);
      // Nothing was asked of the API: no new ad, no ad request.
      expect(Number((await service.knex('ads').count('* as count'))[0]!.count)).toBe(adsBefore);
    } finally {
      makerWallet.refuseSwitch = false;
    }
  }, 60_000);

  it('connects Freighter (a double speaking its window messages): a wallet on another network is named; on the right one, SEP-10 sign-in, then the EVM wallet linked', async () => {
    const browser = await launchBrowser();
    try {
      const keypair = Keypair.random();
      const challenge = (await call(service, 'POST', '/v1/auth/challenge', { address: keypair.publicKey(), chainKind: 'STELLAR' })).body;
      const page = browser.page;
      const freighter = await installFreighterDouble(page, keypair, { name: 'PUBLIC', passphrase: 'Public Global Stellar Network ; September 2015' });
      const evm = await installEvmWalletDouble(page, Wallet.createRandom().privateKey, service.devnet!.rpcUrls, AD_CHAIN);
      await page.goto(`${service.url}/app/#/bridge`);
      await pageReady(page);
      await page.getByRole('button', { name: 'Connect Freighter' }).click();
      await page.getByRole('button', { name: 'Sign in with Stellar' }).click();
      await saysStatus(page, /^Sign in with Stellar failed: /, 'Freighter\'s other network named');
      expect(await statusText(page)).toBe(`Sign in with Stellar failed: Freighter is on "Public Global Stellar Network ; September 2015", the service signs in on "${challenge.networkPassphrase}". Switch networks in Freighter.`);

      freighter.network = { name: 'STANDALONE', passphrase: challenge.networkPassphrase };
      await page.reload();
      await pageReady(page);
      await page.getByRole('button', { name: 'Connect Freighter' }).click();
      freighter.declineNext = true;
      await page.getByRole('button', { name: 'Sign in with Stellar' }).click();
      await saysStatus(page, 'Sign in with Stellar failed: You declined the request in Freighter: nothing was signed.', 'the declined SEP-10 signature said');
      await page.getByRole('button', { name: 'Sign in with Stellar' }).click();
      await saysDone(page, 'Sign in with Stellar');
      expect(await page.locator('[data-field=signed-in]').textContent()).toBe(`Signed in: ${keypair.publicKey()}`);

      await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
      await page.getByRole('button', { name: 'Link this EVM wallet' }).click();
      await saysDone(page, 'Link this EVM wallet');
      expect(await page.locator('[data-field=signed-in]').textContent()).toContain(evm.wallet.address);
      evm.close();
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('offers the ad side of a trade found by its id on a fresh page (no record of it) to its Bridger alone when the Maker locks and never unlocks: one click, the Bridger is paid and the trade settles', async () => {
    const page = bridgerBrowser.page;
    const maker = makerBrowser.page;
    await page.goto(`${service.url}/app/#/bridge`);
    await page.reload();
    await pageReady(page);
    await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await page.locator('[data-field=evm-address]').waitFor();
    await page.selectOption('#bridge-route', routeId);
    await page.fill('#bridge-amount', '1');
    await page.getByRole('button', { name: 'Get a quote' }).click();
    await saysDone(page, 'Quote');
    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridgerWallet.wallet.address);
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, makerWallet.wallet.address);
    await page.getByRole('button', { name: 'Bridge' }).click();
    await saysStatus(page, 'Waiting for the Maker\'s lock.', 'executeTrade waiting for the lock after the deposit', 120_000);
    const tradeId = (await page.locator('[data-field=trade-id]').textContent())!;
    // The Bridger goes on from another device: nothing of the page's own run or record is left.
    await findOnFreshPage(page, tradeId);

    // The test plays the Maker: it locks through its page, and never unlocks.
    await maker.goto(`${service.url}/app/#/maker`);
    await maker.reload();
    await pageReady(maker);
    await maker.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    const row = maker.locator(`tr[data-trade-id="${tradeId}"]`);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 30_000, message: 'the Maker\'s page showing the trade awaiting its lock' }).toBe('your lock');
    await row.getByRole('button', { name: 'Lock' }).click();
    await saysDone(maker, `Lock (ad ${adId.slice(0, 8)})`, 120_000);

    // Once the proof is ready the Maker's unlock is due and unsent: the Bridger's page offers the ad side, saying the relayer would too.
    const offer = page.locator('[data-field=ad-side]');
    await offer.waitFor({ timeout: 400_000 });
    expect(await offer.textContent()).toContain('The relayer also sends it for you after a grace');
    expect(await page.locator('.trade [data-field=status]').textContent()).toBe('LOCKED');
    // Anyone else who finds the trade (the Maker, signed in with its own wallet) is told why there is no button.
    await maker.goto(`${service.url}/app/#/bridge`);
    await pageReady(maker);
    await maker.fill('#trade-lookup', tradeId);
    await maker.getByRole('button', { name: 'Find', exact: true }).click();
    await saysDone(maker, 'Find the trade');
    const refused = maker.locator('[data-field=ad-side] [data-field=not-bridger]');
    await refused.waitFor({ timeout: 30_000 });
    expect(await refused.textContent()).toMatch(new RegExp(`^Only this trade's Bridger \\(${bridgerWallet.wallet.address}\\) can do this: the connected wallet is ${makerWallet.wallet.address}\\.$`, 'i'));
    expect(await maker.getByRole('button', { name: 'Take the ad side' }).count()).toBe(0);
    expect(await page.locator('[data-field=not-bridger]').count()).toBe(0);
    await offer.getByRole('button', { name: 'Take the ad side' }).click();
    // The found trade taken up from what the service says (resumeTrade with its id): the ad side, then the Bridger's own unlock.
    await saysDone(page, 'Take the ad side', 240_000);
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 60_000, message: 'the trade settled after the ad side was taken' }).toBe('SETTLED');
    // Both unlocks sent by the Bridger's wallet: paid on the ad chain, the Maker on the order chain.
    expect(await devnet.balanceOf(AD_CHAIN, bridgerWallet.wallet.address)).toBe(bridgerBefore + 1_000_000n);
    expect(await devnet.balanceOf(ORDER_CHAIN, makerWallet.wallet.address)).toBe(makerBefore + 1_000_000n);
    const transactions = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body.transactions;
    expect(transactions.map((tx: any) => tx.step).sort()).toEqual(['adUnlock', 'deposit', 'lock', 'orderUnlock']);
    expect(transactions.find((tx: any) => tx.step === 'adUnlock').sentBy).not.toBe('relayer');
    expect(await page.locator('[data-field=sent-by-relayer]').count()).toBe(0);
  }, 900_000);

  // Last: it moves both chains' clocks forward for good (deposits signed later would be past their validity).
  it('loses no Bridger deposit to a reload before its confirmation (resumeTrade confirms it), and offers the refund once the trade expired unlocked, also on a fresh page that found the trade by its id; past the order chain\'s refundTime one click there, the deposit is back', async () => {
    const page = bridgerBrowser.page;
    await page.goto(`${service.url}/app/#/bridge`);
    await page.reload();
    await pageReady(page);
    await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await page.locator('[data-field=evm-address]').waitFor();
    await page.selectOption('#bridge-route', routeId);
    await page.fill('#bridge-amount', '1');
    await page.getByRole('button', { name: 'Get a quote' }).click();
    await saysDone(page, 'Quote');
    // The allowance given beforehand, so the deposit is the wallet's first transaction: its receipt is held
    // until the page is gone, so only the reloaded page (resumeTrade, from the kept record) can confirm it.
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 1_000_000n);
    const sentBefore = bridgerWallet.sent.length;
    bridgerWallet.holdReceiptsFrom = sentBefore;
    let deposit = '';
    try {
      await page.getByRole('button', { name: 'Bridge' }).click();
      await expect.poll(() => bridgerWallet.sent.length, { timeout: 60_000, message: 'the wallet double sending the deposit' }).toBe(sentBefore + 1);
      deposit = bridgerWallet.sent.at(-1)!;
      await saysStatus(page, `Sent ${deposit.slice(0, 10)}…: waiting for the chain to include it, then confirming it to the service.`, 'the page holding the deposit\'s hash');
      await page.reload();
    } finally {
      bridgerWallet.holdReceiptsFrom = undefined;
    }
    // No wallet connected after the reload: confirming a kept hash and following the trade need none.
    await pageReady(page);
    await saysStatus(page, 'Waiting for the Maker\'s lock.', 'the resumed trade following the lock after confirming the kept deposit', 120_000);
    const tradeId = (await page.locator('[data-field=trade-id]').textContent())!;
    const trade = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body;
    expect(trade.status).toBe('DEPOSITED');
    expect(trade.transactions.find((tx: any) => tx.step === 'deposit').txHash).toBe(deposit);
    expect(bridgerWallet.sent.length).toBe(sentBefore + 1); // confirmed, never sent again
    const kept = await page.evaluate((id) => Object.keys(localStorage).filter((key) => key.startsWith('relayer.execute.'))
      .map((key) => JSON.parse(localStorage.getItem(key)!)).find((record) => record.tradeId === id), tradeId);
    const { lockExpiry, refundTime } = kept.order.orderParams as { lockExpiry: string; refundTime: string };
    const deadline = Number(lockExpiry) - 3600;
    const bridgerBefore = await devnet.balanceOf(ORDER_CHAIN, bridgerWallet.wallet.address);

    // Nobody locks. The window's timer fires at the deadline by the service's clock; the ad chain's time then passes it too.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (deadline + 1) * 1000 - Date.now())));
    const adChain = devnet.provider(AD_CHAIN);
    const adNow = (await adChain.getBlock('latest'))!.timestamp;
    await adChain.send('evm_increaseTime', [Math.max(0, deadline + 1 - adNow)]);
    for (let i = 0; i < 3; i += 1) await adChain.send('evm_mine', []);
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 120_000, message: 'the trade expired with its lock window closed' }).toBe('EXPIRED');
    const offer = page.locator('[data-field=refund]');
    await offer.waitFor({ timeout: 30_000 });
    expect(await offer.textContent()).toContain('The relayer also sends it for you after a grace');
    // The resumed run cannot send without a wallet: it says so, and the page offers the refund.
    await saysStatus(page, 'Continue the trade failed: Connect an EVM wallet first.', 'the resumed trade waiting for a wallet', 60_000);
    // The Bridger refunds from another device: the trade found by its id, the offer made from what the service says.
    await findOnFreshPage(page, tradeId);
    await offer.waitFor({ timeout: 30_000 });
    expect(await offer.textContent()).toContain(`from ${await page.evaluate((time) => new Date(time * 1000).toLocaleString(), Number(refundTime))} (the order chain's clock)`);
    // The order chain's clock past refundTime (anvil mines no block by itself).
    const orderChain = devnet.provider(ORDER_CHAIN);
    const orderNow = (await orderChain.getBlock('latest'))!.timestamp;
    await orderChain.send('evm_increaseTime', [Math.max(0, Number(refundTime) + 1 - orderNow)]);
    for (let i = 0; i < 3; i += 1) await orderChain.send('evm_mine', []);
    await offer.getByRole('button', { name: 'Refund' }).click();
    await saysDone(page, 'Refund', 120_000);
    expect(await devnet.balanceOf(ORDER_CHAIN, bridgerWallet.wallet.address)).toBe(bridgerBefore + 1_000_000n);
    await expect.poll(() => page.locator('.trade').textContent(), { timeout: 30_000 }).toContain('your deposit was refunded');
  }, 600_000);
});
