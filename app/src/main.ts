import type { Schemas } from '@cross-chain-relayer/client';
import { bridgerView } from './bridger.ts';
import { statusLine, type AppContext } from './context.ts';
import { h, show } from './dom.ts';
import { apiError, UserError } from './errors.ts';
import { makerView } from './maker.ts';
import { Session } from './session.ts';
import { resumePending } from './steps.ts';
import { discoverEvmWallets, EvmWallet, type AnnouncedWallet } from './wallets/evm.ts';
import { StellarWallet } from './wallets/stellar.ts';

/**
 * The page: a wallet bar (EVM wallets found by EIP-6963, Freighter; sign in with either, link the
 * other), and two views by the address's hash: #/maker (the management view) and #/bridge.
 */
async function start(): Promise<void> {
  const statusRegion = h('div', { class: 'status-line', role: 'status', 'aria-live': 'polite' });
  const walletRegion = h('div', { class: 'wallets' });
  const viewRegion = h('main', { id: 'view' });
  const nav = h('nav', { 'aria-label': 'Views' },
    h('a', { href: '#/bridge', 'data-view': 'bridge' }, 'Bridge'),
    h('a', { href: '#/maker', 'data-view': 'maker' }, 'Your ads'));
  document.body.replaceChildren(
    h('header', { class: 'top' }, h('h1', null, 'Cross-chain relayer'), nav, walletRegion),
    statusRegion, viewRegion);

  const context: AppContext = {
    session: new Session(() => { renderWallets(); }),
    chains: [],
    routes: [],
    ...statusLine(statusRegion),
  };
  let evmWallets: AnnouncedWallet[] = [];
  let views: Record<string, HTMLElement & { refresh?: () => void; walletsChanged?: () => void }> = {};

  function renderWallets(): void {
    const { session } = context;
    const user = session.user;
    const buttons: HTMLElement[] = [];
    const button = (text: string, run: () => Promise<void>) => {
      const element: HTMLButtonElement = h('button', { type: 'button', onclick: () => void context.act(text, run, element) }, text);
      return element;
    };
    if (!context.evm) {
      if (evmWallets.length === 0) buttons.push(h('span', { class: 'hint' }, 'No EVM wallet found in this browser.'));
      for (const wallet of evmWallets) {
        buttons.push(button(`Connect ${wallet.info.name}`, async () => { context.evm = await EvmWallet.connect(wallet); renderWallets(); walletsChanged(); }));
      }
    } else {
      buttons.push(h('span', { class: 'account', 'data-field': 'evm-address' }, `${context.evm.name}: ${context.evm.address}`));
    }
    if (!context.stellar) {
      buttons.push(button('Connect Freighter', async () => {
        const stellarChain = context.chains.find((chain) => chain.kind === 'STELLAR');
        context.stellar = await StellarWallet.connect(stellarChain?.networkPassphrase);
        renderWallets();
        walletsChanged();
      }));
    } else {
      buttons.push(h('span', { class: 'account', 'data-field': 'stellar-address' }, `Freighter: ${context.stellar.address}`));
      buttons.push(feePayerField(context));
    }
    if (!user) {
      if (context.evm) buttons.push(button('Sign in with Ethereum', async () => { await session.signIn(context.evm!); refreshViews(); }));
      if (context.stellar) buttons.push(button('Sign in with Stellar', async () => { await session.signIn(context.stellar!); refreshViews(); }));
    } else {
      const has = (kind: 'EVM' | 'STELLAR') => user.wallets.some((w) => w.chainKind === kind);
      buttons.push(h('span', { class: 'account', 'data-field': 'signed-in' }, `Signed in: ${user.wallets.map((w) => w.address).join(', ')}`));
      if (context.evm && !has('EVM')) buttons.push(button('Link this EVM wallet', async () => { await session.link(context.evm!); refreshViews(); }));
      if (context.stellar && !has('STELLAR')) buttons.push(button('Link this Stellar account', async () => { await session.link(context.stellar!); refreshViews(); }));
      buttons.push(button('Sign out', async () => { await session.signOut(); refreshViews(); }));
      // A wallet connected that is not the signed-in user's: say so (actions would be refused).
      if (context.evm && has('EVM') && session.address('EVM')?.toLowerCase() !== context.evm.address.toLowerCase()) {
        buttons.push(h('span', { class: 'status error' }, `The connected wallet ${context.evm.address} is not the signed-in one: sign out and in again.`));
      }
    }
    show(walletRegion, buttons);
  }

  function refreshViews(): void {
    for (const view of Object.values(views)) view.refresh?.();
  }

  function walletsChanged(): void {
    for (const view of Object.values(views)) view.walletsChanged?.();
  }

  function route(): void {
    const name = location.hash.startsWith('#/maker') ? 'maker' : 'bridge';
    views[name] ??= name === 'maker' ? makerView(context) : bridgerView(context);
    show(viewRegion, views[name]);
    for (const link of nav.querySelectorAll('a')) link.toggleAttribute('aria-current', link.dataset.view === name);
  }

  evmWallets = discoverEvmWallets((found) => { evmWallets = found; renderWallets(); });
  renderWallets();
  try {
    const [chains, routes] = await Promise.all([
      context.session.anyone.GET('/v1/chains', { params: { query: { limit: 100 } } }),
      context.session.anyone.GET('/v1/routes', { params: { query: { limit: 100 } } }),
    ]);
    if (!chains.data) throw apiError(chains.error, chains.response.status);
    if (!routes.data) throw apiError(routes.error, routes.response.status);
    context.chains = chains.data.data as Schemas['Chain'][];
    context.routes = routes.data.data as Schemas['Route'][];
  } catch (error) {
    context.say(`The service cannot be reached: ${error instanceof UserError ? error.message : String(error)}`, 'error');
  }
  views = {};
  window.addEventListener('hashchange', route);
  route();
  // Transactions sent before a reload whose confirmation never reached the service: confirmed now.
  if (context.session.user && (await resumePending(context))) refreshViews();
  document.documentElement.dataset.ready = 'true';
  performance.mark('app-ready'); // the page rendered with the service's chains and routes (app/README.md's figure)
}

/**
 * "Fees paid by": another Freighter account (G...) that pays the Soroban transactions' fees as
 * their source, the connected account signing only its authorisation entries (signAuthEntry).
 * Empty: the connected account pays. Checked as a Stellar account address on change.
 */
function feePayerField(context: AppContext): HTMLElement {
  const wallet = context.stellar!;
  const input: HTMLInputElement = h('input', {
    id: 'stellar-fee-payer', name: 'fee-payer', size: 12, placeholder: 'this account', value: wallet.feePayer ?? '', spellcheck: false,
    onchange: () => {
      const value = input.value.trim();
      if (value && !/^G[A-Z2-7]{55}$/.test(value)) {
        input.setAttribute('aria-invalid', 'true');
        context.say(`Fees paid by: "${value.slice(0, 60)}" is not a Stellar account address (G…, 56 characters).`, 'error');
        return;
      }
      input.removeAttribute('aria-invalid');
      wallet.feePayer = value || undefined;
      context.say(value ? `Stellar fees are paid by ${value}: Freighter signs your authorisations, then that account's transaction.` : 'Stellar fees are paid by your account.', 'done');
    },
  });
  return h('label', { class: 'fee-payer', for: 'stellar-fee-payer' }, 'Fees paid by ', input);
}

void start();
