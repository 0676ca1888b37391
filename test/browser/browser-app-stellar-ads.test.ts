import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app/build.ts';
import { stellarAdState } from '../../chains/stellar/views.ts';
import { fund } from '../../devnet/stellar/client.ts';
import { ORDER_CHAIN } from '../support/devnet-client.ts';
import { pageReady, saysDone, saysStatus } from '../support/app-page.ts';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { prepareStellarTrades, STELLAR, xlmBalance, type StellarTradeWorld } from '../support/stellar-trades.ts';
import { installEvmWalletDouble, installFreighterDouble, type EvmDouble, type FreighterDouble } from '../support/wallet-doubles.ts';
import { call } from '../support/wallets.ts';

/**
 * A Maker's Soroban ad driven entirely through the page at /app, in Debian's Chromium against the
 * devnet with the local Soroban network (chain 148) and the Freighter double (Freighter's window
 * messages): create, fund, withdraw, pause/resume, edit bounds, close, each asked of the API, signed
 * in Freighter, sent, confirmed, and the balances shown equal to the AdManager's on chain. Fund and
 * withdraw go through a fee payer (another account in Freighter, "Fees paid by"): the Maker signs
 * only its authorisation entries (Freighter's `signAuthEntry`, `SUBMIT_AUTH_ENTRY`), the fee payer
 * signs the envelope and pays; the Maker's XLM moves by exactly the amounts.
 */

let service: TestService;
let world: StellarTradeWorld;
let browser: TestBrowser;
let evmWallet: EvmDouble;
let freighter: FreighterDouble;
const maker = Keypair.random();
const feePayer = Keypair.random();
let stellarRoute: string;

beforeAll(async () => {
  await buildApp();
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0' });
  const devnet = service.devnet!;
  world = await prepareStellarTrades({ api: service, knex: service.knex, evm: devnet, stellar: devnet.stellar! });
  await Promise.all([fund(world.server, maker.publicKey()), fund(world.server, feePayer.publicKey())]);
  // The page talks to the chain's Soroban RPC at its publicRpcUrl (the CSP follows).
  await service.knex('chains').where({ chain_id: STELLAR }).update({ public_rpc_url: devnet.stellar!.node.rpcUrl });
  const routes = (await call(service, 'GET', `/v1/routes?adChainId=${STELLAR}&orderChainId=${ORDER_CHAIN}`)).body.data;
  stellarRoute = routes.find((r: any) => r.adToken.address === world.stellar.deployment.xlm && r.orderToken.address === world.wxlm[ORDER_CHAIN]).id;
  browser = await launchBrowser();
  // The Maker's EVM wallet: where the ad's trades pay it (the order chain, anvil).
  evmWallet = await installEvmWalletDouble(browser.page, world.evmParties.makerKey!.privateKey, devnet.rpcUrls, ORDER_CHAIN);
  freighter = await installFreighterDouble(browser.page, maker, { name: 'STANDALONE', passphrase: world.passphrase }, [feePayer]);
}, 5 * 60_000);

afterAll(async () => {
  evmWallet?.close();
  await browser?.close();
  world?.chain.close();
  await service?.close();
});


describe('a Maker\'s Soroban ad driven through the page (Freighter double, the local Soroban network)', () => {
  it('create, fund and withdraw (these two with a fee payer: the Maker signs only its authorisation entries), pause/resume, edit bounds, close; each shown balance equal to the AdManager\'s, the Maker\'s XLM moved by the amounts', async () => {
    const page = browser.page;
    const { adManager } = world.stellar.deployment;
    const onChain = (adId: string) => stellarAdState(world.server, adManager, adId);
    const makerXlm = () => xlmBalance(world, maker.publicKey());

    await page.goto(`${service.url}/app/#/maker`);
    await pageReady(page);
    await page.getByRole('button', { name: 'Connect Freighter' }).click();
    await page.getByRole('button', { name: 'Sign in with Stellar' }).click();
    await saysDone(page, 'Sign in with Stellar');
    await page.getByRole('button', { name: 'Connect Test wallet (double)' }).click();
    await page.locator('[data-field=evm-address]').waitFor();

    // Create: 5 XLM from the Maker's own account (its envelope signature authorises the pull; it pays the fee).
    let before = await makerXlm();
    await page.selectOption('#create-route', stellarRoute);
    await page.fill('#create-fund', '5');
    await page.getByRole('button', { name: 'Create ad' }).click();
    await saysDone(page, 'Create ad', 120_000);
    const card = page.locator('article.ad').first();
    await card.waitFor();
    const adId = (await card.getAttribute('data-ad-id'))!;
    const field = (name: string) => card.locator(`[data-field=${name}]`).first();
    const act = (name: string) => card.getByRole('button', { name, exact: true });
    const action = (name: string) => `${name} (ad ${adId.slice(0, 8)})`;
    expect(await field('available').textContent()).toBe('5 XLM');
    expect(await field('label').textContent()).toBe('Active');
    expect(await onChain(adId)).toEqual({ exists: true, available: 50_000_000n, locked: 0n, closed: false });
    expect(before - (await makerXlm())).toBeGreaterThan(50_000_000n); // the amount and its fee
    expect(freighter.authEntries).toEqual([]);

    // "Fees paid by": another account in Freighter. A refused signAuthEntry is said and nothing moves.
    const wrong = page.locator('#stellar-fee-payer');
    await wrong.fill('not-an-account');
    await wrong.press('Tab');
    await saysStatus(page, /^Fees paid by: "not-an-account" is not a Stellar account address/, 'the fee payer named as no account');
    await page.fill('#stellar-fee-payer', feePayer.publicKey());
    await page.locator('#stellar-fee-payer').press('Tab');
    await saysStatus(page, `Stellar fees are paid by ${feePayer.publicKey()}: Freighter signs your authorisations, then that account's transaction.`, 'the fee payer taken');
    await card.locator('input[name=amount]').fill('2');
    before = await makerXlm();
    freighter.declineNext = true;
    await act('Fund').click();
    await saysStatus(page, `${action('Fund')} failed: You declined the request in Freighter: nothing was signed.`, 'the declined signAuthEntry said', 60_000);
    expect(freighter.authEntries).toEqual([]);
    expect(await makerXlm()).toBe(before);

    // Fund 2 XLM, sponsored: Freighter signs the Maker's authorisation entry, then the fee payer's envelope.
    const envelopes = freighter.envelopes.length;
    const payerBefore = await xlmBalance(world, feePayer.publicKey());
    await act('Fund').click();
    await saysDone(page, action('Fund'), 120_000);
    expect(freighter.authEntries).toEqual([maker.publicKey()]);
    expect(freighter.envelopes.slice(envelopes)).toEqual([feePayer.publicKey()]);
    expect(await makerXlm()).toBe(before - 20_000_000n); // exactly the amount: the fee payer paid the fee
    expect(await xlmBalance(world, feePayer.publicKey())).toBeLessThan(payerBefore);
    await expect.poll(() => field('available').textContent(), { timeout: 30_000 }).toBe('7 XLM');
    expect(await field('pool').textContent()).toBe('7 XLM');
    expect(await onChain(adId)).toEqual({ exists: true, available: 70_000_000n, locked: 0n, closed: false });

    // Withdraw 1.5 XLM to the Maker's account, sponsored too.
    before = await makerXlm();
    await card.locator('input[name=amount]').fill('1.5');
    await act('Withdraw').click();
    await saysDone(page, action('Withdraw'), 120_000);
    expect(freighter.authEntries).toEqual([maker.publicKey(), maker.publicKey()]);
    expect(await makerXlm()).toBe(before + 15_000_000n);
    await expect.poll(() => field('available').textContent(), { timeout: 30_000 }).toBe('5.5 XLM');
    expect(await onChain(adId)).toMatchObject({ available: 55_000_000n, locked: 0n, closed: false });

    // Pause and resume (the API alone: no transaction).
    await act('Pause').click();
    await saysDone(page, action('Pause'));
    await expect.poll(() => field('status').textContent()).toBe('PAUSED');
    expect(await field('label').textContent()).toBe('Closed');
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body.status).toBe('PAUSED');
    await act('Resume').click();
    await saysDone(page, action('Resume'));
    await expect.poll(() => field('status').textContent()).toBe('ACTIVE');
    expect(await field('label').textContent()).toBe('Active');

    // Edit bounds, in the order token's units (WXLM on anvil, 7 decimals).
    await card.locator('input[name=min]').fill('0.5');
    await card.locator('input[name=max]').fill('3');
    await act('Save bounds').click();
    await saysDone(page, action('Save bounds'));
    await expect.poll(() => card.locator('.terms').textContent()).toContain('Bounds: 0.5 – 3 WXLM.');
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ minAmount: '5000000', maxAmount: '30000000' });

    // Close from the Maker's own account again (the fee payer cleared): the rest comes back, less the fee.
    await page.fill('#stellar-fee-payer', '');
    await page.locator('#stellar-fee-payer').press('Tab');
    before = await makerXlm();
    page.once('dialog', (dialog) => void dialog.accept());
    await act('Close').click();
    await saysDone(page, action('Close'), 120_000);
    expect(freighter.authEntries).toHaveLength(2);
    const gained = (await makerXlm()) - before;
    expect(gained).toBeLessThan(55_000_000n);
    expect(gained).toBeGreaterThan(55_000_000n - 10_000_000n); // the rest less a fee well under 1 XLM
    await expect.poll(() => field('status').textContent(), { timeout: 30_000 }).toBe('CLOSED');
    expect(await field('label').textContent()).toBe('Closed');
    expect(await field('available').textContent()).toBe('0 XLM');
    expect(await onChain(adId)).toEqual({ exists: true, available: 0n, locked: 0n, closed: true });
    expect(await act('Fund').count()).toBe(0);
  }, 600_000);
});
