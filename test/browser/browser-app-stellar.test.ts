import { Keypair } from '@stellar/stellar-sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app/build.ts';
import { AD_CHAIN, ORDER_CHAIN } from '../support/devnet-client.ts';
import { pageReady, saysDone, saysStatus } from '../support/app-page.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { prepareStellarTrades, STELLAR, wxlmBalance, xlmBalance, type StellarTradeWorld } from '../support/stellar-trades.ts';
import { installEvmWalletDouble, installFreighterDouble, type EvmDouble } from '../support/wallet-doubles.ts';
import { call } from '../support/wallets.ts';
import { fund } from '../../devnet/stellar/client.ts';

/**
 * The page at /app with a Stellar side, in Debian's Chromium against the devnet with the local
 * Soroban network (chain 148): the EVM Maker's WXLM ad on anvil pays out for XLM deposited on
 * Soroban. The Bridger, signed in with SEP-10 through a Freighter double (answering Freighter's
 * window messages with a Stellar key), deposits through the page (the lazily loaded Stellar chunk
 * builds and simulates at the chain's publicRpcUrl; its fees paid by a second account in Freighter
 * through executeTrade's fee payer, the Bridger signing only its authorisation entry); the Maker locks
 * and unlocks on anvil; the Bridger's unlock on Soroban is signed with Freighter's `signMessage`
 * (SEP-53 over the order hash's text) and sent from Freighter; the trade settles, each chain's
 * balances moved by the amounts.
 */

let service: TestService;
let world: StellarTradeWorld;
let makerBrowser: TestBrowser;
let bridgerBrowser: TestBrowser;
let makerWallet: EvmDouble;
let bridgerWallet: EvmDouble;
let bridgerFreighter: Awaited<ReturnType<typeof installFreighterDouble>>;
/** A second account in the Bridger's Freighter that pays its deposit's Soroban fees ("Fees paid by"). */
const sponsor = Keypair.random();
let routeId: string;

beforeAll(async () => {
  await buildApp();
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0' });
  const devnet = service.devnet!;
  world = await prepareStellarTrades({ api: service, knex: service.knex, evm: devnet, stellar: devnet.stellar! });
  const routes = (await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${STELLAR}`)).body.data;
  routeId = routes.find((r: any) => r.adToken.address === world.wxlm[AD_CHAIN]).id;
  const network = { name: 'STANDALONE', passphrase: world.passphrase };
  // The page talks to the chain's Soroban RPC at its publicRpcUrl (the CSP follows): the devnet's own
  // node, which answers CORS as a public Stellar RPC does.
  await service.knex('chains').where({ chain_id: STELLAR }).update({ public_rpc_url: devnet.stellar!.node.rpcUrl });
  makerBrowser = await launchBrowser();
  bridgerBrowser = await launchBrowser();

  const { makerKey, bridgerKey } = world.evmParties;
  makerWallet = await installEvmWalletDouble(makerBrowser.page, makerKey!.privateKey, devnet.rpcUrls, AD_CHAIN);
  bridgerWallet = await installEvmWalletDouble(bridgerBrowser.page, bridgerKey!.privateKey, devnet.rpcUrls, AD_CHAIN);
  await installFreighterDouble(makerBrowser.page, world.makerStellar, network);
  await fund(world.server, sponsor.publicKey());
  bridgerFreighter = await installFreighterDouble(bridgerBrowser.page, world.bridgerStellar, network, [sponsor]);
}, 5 * 60_000);

afterAll(async () => {
  makerWallet?.close();
  bridgerWallet?.close();
  await makerBrowser?.close();
  await bridgerBrowser?.close();
  world?.chain.close();
  await service?.close();
});


async function open(page: Page, view: string): Promise<void> {
  await page.goto(`${service.url}/app/#/${view}`);
  await pageReady(page);
}

const field = (page: Page, adId: string, name: string) => page.locator(`article[data-ad-id="${adId}"] [data-field=${name}]`).first();

describe('the page at /app with a Stellar side (Freighter double, the local Soroban network)', () => {
  it('an EVM Maker\'s ad pays out for an XLM deposit made through the page on Soroban, its fees paid by a sponsor account (executeTrade\'s fee payer: the Bridger signs only its authorisation entry); the Bridger\'s unlock is signed with Freighter\'s signMessage and sent from its own account; SETTLED with both chains\' balances moved', async () => {
    const maker = makerBrowser.page;
    const page = bridgerBrowser.page;
    const { orderPortal } = world.stellar.deployment;

    // The Maker: SIWE, Freighter connected for the Stellar account paid by the trades, an ad of 5 WXLM.
    await open(maker, 'maker');
    await maker.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await maker.getByRole('button', { name: 'Sign in with Ethereum' }).click();
    await saysDone(maker, 'Sign in with Ethereum');
    await maker.getByRole('button', { name: 'Connect Freighter' }).click();
    await maker.locator('[data-field=stellar-address]').waitFor();
    await maker.selectOption('#create-route', routeId);
    await maker.fill('#create-fund', '5');
    await maker.getByRole('button', { name: 'Create ad' }).click();
    await saysDone(maker, 'Create ad');
    const card = maker.locator('article.ad').first();
    await card.waitFor();
    const adId = (await card.getAttribute('data-ad-id'))!;
    expect(await field(maker, adId, 'available').textContent()).toBe('5 WXLM');

    // The Bridger: SEP-10 with Freighter, the EVM wallet connected to be paid on anvil; the deposit on Soroban.
    await open(page, 'bridge');
    await page.getByRole('button', { name: 'Connect Freighter' }).click();
    await page.getByRole('button', { name: 'Sign in with Stellar' }).click();
    await saysDone(page, 'Sign in with Stellar');
    await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await page.locator('[data-field=evm-address]').waitFor();
    await page.fill('#stellar-fee-payer', sponsor.publicKey());
    await page.locator('#stellar-fee-payer').press('Tab');
    await saysStatus(page, /^Stellar fees are paid by G/, 'the fee payer taken');
    await page.selectOption('#bridge-route', routeId);
    await page.fill('#bridge-amount', '1');
    await page.getByRole('button', { name: 'Get a quote' }).click();
    await saysDone(page, 'Quote');
    expect(await page.locator('[data-field=ad]').textContent()).toBe(adId);
    const portalBefore = await xlmBalance(world, orderPortal);
    const [bridgerXlmBefore, sponsorXlmBefore] = [await xlmBalance(world, world.bridgerStellar.publicKey()), await xlmBalance(world, sponsor.publicKey())];
    const envelopesBefore = bridgerFreighter.envelopes.length; // the SEP-10 challenge's among them
    await page.getByRole('button', { name: 'Bridge' }).click();
    // The page's executeTrade: the Soroban deposit sent from Freighter and confirmed, then the lock awaited.
    await saysStatus(page, 'Waiting for the Maker\'s lock.', 'executeTrade waiting for the lock after the deposit', 120_000);
    const tradeId = (await page.locator('[data-field=trade-id]').textContent())!;
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('DEPOSITED');
    expect(await xlmBalance(world, orderPortal)).toBe(portalBefore + 10_000_000n);
    // The sponsor was the deposit's source and paid its fee: the Bridger's XLM moved by exactly the deposit.
    expect(bridgerFreighter.authEntries).toEqual([world.bridgerStellar.publicKey()]);
    expect(bridgerFreighter.envelopes.slice(envelopesBefore)).toEqual([sponsor.publicKey()]);
    expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerXlmBefore - 10_000_000n);
    expect(await xlmBalance(world, sponsor.publicKey())).toBeLessThan(sponsorXlmBefore);
    // The Bridger pays its unlock's fee itself: the fee payer cleared before it.
    await page.fill('#stellar-fee-payer', '');
    await page.locator('#stellar-fee-payer').press('Tab');
    const { orderHash } = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body;

    // The Maker locks and unlocks on anvil (its EVM wallet signs the unlock).
    const row = maker.locator(`tr[data-trade-id="${tradeId}"]`);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 30_000 }).toBe('your lock');
    await row.getByRole('button', { name: 'Lock' }).click();
    await saysDone(maker, `Lock (ad ${adId.slice(0, 8)})`, 120_000);
    await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 400_000, interval: 2_000 }).toBe('your unlock (pays the Bridger)');
    const bridgerWxlm = await wxlmBalance(world, AD_CHAIN, bridgerWallet.wallet.address);
    // The Bridger's unlock on Soroban follows at once on its page (executeTrade): the person declines it the first time.
    const makerXlm = await xlmBalance(world, world.makerStellar.publicKey());
    bridgerFreighter.declineNext = true;
    await row.getByRole('button', { name: 'Unlock' }).click();
    await saysDone(maker, `Unlock (ad ${adId.slice(0, 8)})`, 120_000);
    expect(await wxlmBalance(world, AD_CHAIN, bridgerWallet.wallet.address)).toBe(bridgerWxlm + 10_000_000n);

    // The Bridger's unlock on Soroban: a declined signature is said and nothing moves; continued, Freighter
    // signs the order hash's text (SEP-53) and the unlock transaction, paying the Maker's Stellar account.
    await saysStatus(page, 'Bridge failed: You declined the request in Freighter: nothing was signed.', 'the declined unlock signature said', 120_000);
    expect(bridgerFreighter.signed).toEqual([]);
    await page.getByRole('button', { name: 'Continue the trade' }).click();
    await saysDone(page, 'Continue the trade', 120_000);
    expect(bridgerFreighter.signed).toEqual([orderHash.toLowerCase()]);
    expect(bridgerFreighter.envelopes.slice(envelopesBefore)).toEqual([sponsor.publicKey(), world.bridgerStellar.publicKey()]);
    await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('SETTLED');
    expect(await xlmBalance(world, world.makerStellar.publicKey())).toBe(makerXlm + 10_000_000n);
    await expect.poll(() => row.locator('.label').textContent(), { timeout: 30_000 }).toBe('Settled');
    await expect.poll(() => field(maker, adId, 'locked').textContent(), { timeout: 30_000 }).toBe('0 WXLM');
    expect(await field(maker, adId, 'available').textContent()).toBe('4 WXLM');
    expect(await page.locator('[data-field=final-balance]').textContent({ timeout: 30_000 }))
      .toBe(`${(await wxlmBalance(world, AD_CHAIN, bridgerWallet.wallet.address)) / 10_000_000n} WXLM`);
  }, 900_000);

  it('a Stellar Maker (SEP-10 with Freighter) creates an XLM ad on Soroban through the page, locks and unlocks it from Freighter (the unlock signed with signMessage) for a WXLM deposit on anvil; SETTLED with both chains\' balances moved', async () => {
    const network = { name: 'STANDALONE', passphrase: world.passphrase };
    const { makerKey, bridgerKey } = world.evmParties;
    const { xlm, adManager } = world.stellar.deployment;
    const routes = (await call(service, 'GET', `/v1/routes?adChainId=${STELLAR}&orderChainId=${ORDER_CHAIN}`)).body.data;
    const stellarRoute = routes.find((r: any) => r.adToken.address === xlm && r.orderToken.address === world.wxlm[ORDER_CHAIN]).id;
    const makerSide = await launchBrowser();
    const bridgerSide = await launchBrowser();
    const evmWallets: EvmDouble[] = [];
    try {
      const maker = makerSide.page;
      const page = bridgerSide.page;
      evmWallets.push(await installEvmWalletDouble(maker, makerKey!.privateKey, service.devnet!.rpcUrls, ORDER_CHAIN));
      evmWallets.push(await installEvmWalletDouble(page, bridgerKey!.privateKey, service.devnet!.rpcUrls, AD_CHAIN));
      const makerFreighter = await installFreighterDouble(maker, world.makerStellar, network);
      await installFreighterDouble(page, world.bridgerStellar, network);

      // The Maker: SEP-10 with Freighter, the EVM wallet connected to be paid on anvil; the ad created on Soroban from Freighter.
      await open(maker, 'maker');
      await maker.getByRole('button', { name: 'Connect Freighter' }).click();
      await maker.getByRole('button', { name: 'Sign in with Stellar' }).click();
      await saysDone(maker, 'Sign in with Stellar');
      await maker.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
      await maker.locator('[data-field=evm-address]').waitFor();
      const managerBefore = await xlmBalance(world, adManager);
      await maker.selectOption('#create-route', stellarRoute);
      await maker.fill('#create-fund', '5');
      await maker.getByRole('button', { name: 'Create ad' }).click();
      await saysDone(maker, 'Create ad', 120_000);
      const card = maker.locator('article.ad').first();
      await card.waitFor();
      const adId = (await card.getAttribute('data-ad-id'))!;
      expect(await field(maker, adId, 'available').textContent()).toBe('5 XLM');
      expect(await xlmBalance(world, adManager)).toBe(managerBefore + 50_000_000n);

      // The Bridger: SIWE, Freighter connected to be paid on Soroban; the WXLM deposit on anvil.
      await open(page, 'bridge');
      await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
      await page.getByRole('button', { name: 'Sign in with Ethereum' }).click();
      await saysDone(page, 'Sign in with Ethereum');
      await page.getByRole('button', { name: 'Connect Freighter' }).click();
      await page.locator('[data-field=stellar-address]').waitFor();
      await page.selectOption('#bridge-route', stellarRoute);
      await page.fill('#bridge-amount', '1');
      await page.getByRole('button', { name: 'Get a quote' }).click();
      await saysDone(page, 'Quote');
      expect(await page.locator('[data-field=ad]').textContent()).toBe(adId);
      await page.getByRole('button', { name: 'Bridge' }).click();
      await saysStatus(page, 'Waiting for the Maker\'s lock.', 'executeTrade waiting for the lock after the deposit', 120_000);
      const tradeId = (await page.locator('[data-field=trade-id]').textContent())!;
      const { orderHash } = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body;

      // The Maker's lock and unlock on Soroban, from Freighter; the unlock signed with signMessage.
      const row = maker.locator(`tr[data-trade-id="${tradeId}"]`);
      await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 30_000 }).toBe('your lock');
      await row.getByRole('button', { name: 'Lock' }).click();
      await saysDone(maker, `Lock (ad ${adId.slice(0, 8)})`, 120_000);
      await expect.poll(() => field(maker, adId, 'locked').textContent(), { timeout: 30_000 }).toBe('1 XLM');
      await expect.poll(() => row.locator('[data-field=awaits]').textContent(), { timeout: 400_000, interval: 2_000 }).toBe('your unlock (pays the Bridger)');
      const bridgerXlm = await xlmBalance(world, world.bridgerStellar.publicKey());
      const makerWxlm = await wxlmBalance(world, ORDER_CHAIN, evmWallets[0]!.wallet.address);
      await row.getByRole('button', { name: 'Unlock' }).click();
      await saysDone(maker, `Unlock (ad ${adId.slice(0, 8)})`, 120_000);
      expect(makerFreighter.signed).toEqual([orderHash.toLowerCase()]);
      expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerXlm + 10_000_000n);

      // The Bridger's unlock on anvil (its EVM wallet signs it, executeTrade sends it) pays the Maker WXLM; SETTLED.
      await saysDone(page, 'Bridge', 120_000);
      await expect.poll(() => page.locator('.trade [data-field=status]').textContent(), { timeout: 30_000 }).toBe('SETTLED');
      expect(await wxlmBalance(world, ORDER_CHAIN, evmWallets[0]!.wallet.address)).toBe(makerWxlm + 10_000_000n);
      await expect.poll(() => field(maker, adId, 'locked').textContent(), { timeout: 30_000 }).toBe('0 XLM');
      expect(await field(maker, adId, 'available').textContent()).toBe('4 XLM');
      expect(await xlmBalance(world, adManager)).toBe(managerBefore + 40_000_000n);
    } finally {
      for (const wallet of evmWallets) wallet.close();
      await makerSide.close();
      await bridgerSide.close();
    }
  }, 900_000);
});
