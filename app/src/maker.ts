import { followEvents, type Schemas } from '@cross-chain-relayer/client';
import { parseAmount, formatAmount } from './amounts.ts';
import { balanceBar } from './bar.ts';
import { chainOf, tokenName, type AppContext } from './context.ts';
import { h, show } from './dom.ts';
import { UserError } from './errors.ts';
import { adLabel, tradeLabel } from './labels.ts';
import { API_BASE } from './session.ts';
import { addressOn, approveFor, confirm, ready, sendAndConfirm, signUnlock } from './steps.ts';

type Ad = Schemas['Ad'];
type Trade = Schemas['Trade'];

/** What the Maker's page keeps between renders: typed drafts (an update never wipes them), proofs seen ready. */
interface MakerState { ads: Ad[]; trades: Map<string, Trade[]>; drafts: Map<string, string>; proofReady: Set<string>; stop?: AbortController }

/**
 * The Maker's management view: every ad of the signed-in user (both chain kinds) with its balances
 * as a bar, bounds, route, price and label; create, fund, withdraw, pause/resume, edit bounds, close;
 * each ad's trades with what they await from the Maker, one click each. Live over the user's event
 * stream (a ticket per connection, EventSource), no polling: an event reloads what it touched.
 */
export function makerView(context: AppContext): HTMLElement {
  const state: MakerState = { ads: [], trades: new Map(), drafts: new Map(), proofReady: new Set() };
  const adsRegion = h('div', { class: 'ads', 'aria-live': 'polite' });
  const root = h('section', { class: 'maker', 'aria-labelledby': 'maker-title' },
    h('h2', { id: 'maker-title' }, 'Your ads'),
    createForm(context, () => void load()),
    adsRegion);

  const draft = (key: string, props: Record<string, unknown> = {}) => h('input', {
    ...props, value: state.drafts.get(key) ?? '', oninput: (event: Event) => state.drafts.set(key, (event.target as HTMLInputElement).value),
  });
  const amountOf = (key: string, decimals: number): bigint => parseAmount(state.drafts.get(key) ?? '', decimals);

  async function load(): Promise<void> {
    const { session } = context;
    if (!session.user) { show(adsRegion, h('p', null, 'Sign in to see your ads.')); return; }
    const ads: Ad[] = [];
    for (const wallet of session.user.wallets) {
      const page = await session.call(() => session.anyone.GET('/v1/ads', { params: { query: { creatorAddress: wallet.address, limit: 100 } } }));
      ads.push(...page.data);
    }
    state.ads = ads;
    await Promise.all(ads.map(async (ad) => {
      const trades = await session.call(() => session.anyone.GET('/v1/trades/all', { params: { query: { adId: ad.id, limit: 100 } } }));
      state.trades.set(ad.id, trades.data);
    }));
    render();
  }

  function render(): void {
    if (state.ads.length === 0) { show(adsRegion, h('p', null, 'No ads yet: create one above.')); return; }
    show(adsRegion, state.ads.map(adCard));
  }

  function adCard(ad: Ad): HTMLElement {
    const route = context.routes.find((r) => r.id === ad.routeId);
    const decimals = ad.adToken.decimals;
    const orderDecimals = ad.orderToken.decimals;
    const label = adLabel(ad.status);
    const closed = ad.status === 'CLOSED';
    const button = (text: string, run: (button: HTMLButtonElement) => Promise<void>, disabled = false) => {
      const element: HTMLButtonElement = h('button', { type: 'button', disabled, onclick: () => void context.act(`${text} (ad ${ad.id.slice(0, 8)})`, () => run(element), element) }, text);
      return element;
    };
    const adChain = ad.adToken.chainId;
    const trades = state.trades.get(ad.id) ?? [];
    return h('article', { class: 'ad', 'data-ad-id': ad.id, 'aria-label': `Ad ${ad.id}` },
      h('header', null,
        h('h3', null, `${tokenName(ad.adToken, context)} → ${tokenName(ad.orderToken, context)}`),
        h('span', { class: `label label-${label.toLowerCase()}`, 'data-field': 'label' }, label),
        h('span', { class: 'api-status', 'data-field': 'status' }, ad.status)),
      balanceBar(ad, decimals, ad.adToken.symbol),
      h('p', { class: 'terms' },
        route?.price ? `Price: ${route.price.orderUnits} ${ad.orderToken.symbol} base units buy ${route.price.adUnits} ${ad.adToken.symbol} base units. ` : '',
        `Bounds: ${ad.minAmount ? formatAmount(ad.minAmount, orderDecimals) : 'no minimum'} – ${ad.maxAmount ? formatAmount(ad.maxAmount, orderDecimals) : 'no maximum'} ${ad.orderToken.symbol}.`),
      closed ? null : h('div', { class: 'actions' },
        h('label', null, 'Amount ', draft(`${ad.id}:amount`, { name: 'amount', inputMode: 'decimal', size: 8 })),
        button('Fund', async () => {
          const amount = amountOf(`${ad.id}:amount`, decimals);
          await ready(context, adChain);
          const signed = await context.session.call(() => context.session.api.POST('/v1/ads/{id}/fund', { params: { path: { id: ad.id } }, body: { poolAmountTopUp: amount.toString() } }));
          await approveFor(context, adChain, ad.adToken, signed.contractAddress, amount);
          await sendAndConfirm(context, adChain, 'fundAd', signed, { kind: 'ad', id: ad.id }, { adToken: ad.adToken.address });
          await load();
        }),
        button('Withdraw', async () => {
          const amount = amountOf(`${ad.id}:amount`, decimals);
          const signed = await context.session.call(() => context.session.api.POST('/v1/ads/{id}/withdraw', { params: { path: { id: ad.id } }, body: { poolAmountWithdraw: amount.toString(), to: addressOn(context, adChain) } }));
          await sendAndConfirm(context, adChain, 'withdrawFromAd', signed, { kind: 'ad', id: ad.id });
          await load();
        }),
        button(ad.status === 'PAUSED' ? 'Resume' : 'Pause', async () => {
          await context.session.call(() => context.session.api.PATCH('/v1/ads/{id}/update', { params: { path: { id: ad.id } }, body: { status: ad.status === 'PAUSED' ? 'ACTIVE' : 'PAUSED' } }));
          await load();
        }, ad.status === 'PENDING'),
        h('label', null, 'Min ', draft(`${ad.id}:min`, { name: 'min', inputMode: 'decimal', size: 6 })),
        h('label', null, 'Max ', draft(`${ad.id}:max`, { name: 'max', inputMode: 'decimal', size: 6 })),
        button('Save bounds', async () => {
          const bound = (key: string) => ((state.drafts.get(key) ?? '').trim() ? amountOf(key, orderDecimals).toString() : null);
          await context.session.call(() => context.session.api.PATCH('/v1/ads/{id}/update', { params: { path: { id: ad.id } }, body: { minAmount: bound(`${ad.id}:min`), maxAmount: bound(`${ad.id}:max`) } }));
          await load();
        }),
        button('Close', async () => {
          if (!confirmClose()) return;
          const signed = await context.session.call(() => context.session.api.POST('/v1/ads/{id}/close', { params: { path: { id: ad.id } }, body: { to: addressOn(context, adChain) } }));
          await sendAndConfirm(context, adChain, 'closeAd', signed, { kind: 'ad', id: ad.id });
          await load();
        })),
      trades.length ? h('table', { class: 'trades' },
        h('caption', null, 'Trades of this ad'),
        h('thead', null, h('tr', null, ['Trade', 'Amount', 'Label', 'Awaits from you', ''].map((title) => h('th', { scope: 'col' }, title)))),
        h('tbody', null, trades.map((trade) => tradeRow(trade, button)))) : null);
  }

  function tradeRow(trade: Trade, button: (text: string, run: () => Promise<void>) => HTMLButtonElement): HTMLElement {
    const label = tradeLabel(trade.status);
    let awaits = '—';
    let action: HTMLButtonElement | null = null;
    if (trade.status === 'DEPOSITED') {
      awaits = 'your lock';
      action = button('Lock', async () => {
        const signed = await context.session.call(() => context.session.api.POST('/v1/trades/{id}/lock', { params: { path: { id: trade.id } } }));
        await sendAndConfirm(context, trade.adChainId, 'lockForOrder', signed, { kind: 'trade', id: trade.id });
        await load();
      });
    } else if (trade.status === 'LOCKED' && trade.unlockDue === 'MAKER') {
      awaits = state.proofReady.has(trade.id) ? 'your unlock (pays the Bridger)' : 'your unlock, once the proof is ready';
      action = button('Unlock', async () => {
        if (!trade.orderHash) throw new UserError('The trade has no order hash yet.');
        // The Maker's unlock pays the Bridger on the ad chain: that chain's wallet signs it.
        const signature = await signUnlock(context, trade.adChainId, trade.orderHash);
        const signed = await confirm(context, () => context.session.api.POST('/v1/trades/{id}/unlock', { params: { path: { id: trade.id } }, body: { signature } }));
        await sendAndConfirm(context, signed.chainId, 'unlock', signed, { kind: 'unlock', id: trade.id });
        await load();
      });
    } else if (trade.status === 'LOCKED') {
      awaits = trade.unlockDue === 'BRIDGER' ? 'nothing: the Bridger\'s unlock pays you' : 'nothing: the proof is being made';
    }
    return h('tr', { 'data-trade-id': trade.id },
      h('td', null, trade.id.slice(0, 8)),
      h('td', null, formatAmount(trade.amount, trade.route?.orderToken?.decimals ?? 0)),
      h('td', null, h('span', { class: `label label-${label.toLowerCase()}`, 'data-field': 'label' }, label), ' ', h('span', { class: 'api-status' }, trade.status)),
      h('td', { 'data-field': 'awaits' }, awaits),
      h('td', null, action));
  }

  // Live: the caller's event stream; each event reloads the ads and their trades (a handful of reads).
  let reloading: Promise<void> | undefined;
  let again = false;
  const reload = (): void => {
    if (reloading) { again = true; return; }
    reloading = load().catch((error) => context.say(`Could not refresh: ${String(error)}`, 'error')).finally(() => {
      reloading = undefined;
      if (again) { again = false; reload(); }
    });
  };
  function follow(): void {
    state.stop?.abort();
    if (!context.session.user) return;
    const stop = new AbortController();
    state.stop = stop;
    void followEvents({
      baseUrl: API_BASE,
      getAccessToken: async () => {
        // Asked before each connection: hand out a refreshed token when the one held has expired.
        return context.session.accessToken ?? '';
      },
      onEvent: (event) => {
        const data = event.data.data as { tradeId?: string; proofReady?: boolean };
        if (data.tradeId && data.proofReady) state.proofReady.add(data.tradeId);
        reload();
      },
      signal: stop.signal,
    }).catch(async (error) => {
      if ((error as { status?: number }).status === 401 && (await context.session.refresh())) follow();
      else context.say(`Live updates stopped: ${String((error as Error).message ?? error)}`, 'error');
    });
  }
  (root as HTMLElement & { refresh?: () => void }).refresh = () => { follow(); reload(); };
  follow();
  reload();
  return root;
}

function confirmClose(): boolean {
  // The native dialog: closing is irreversible (the spec), the person says so first.
  return window.confirm('Close this ad? Its remaining pool goes back to your wallet and it takes no new order. This cannot be undone.');
}

/** The create form: route, initial funding, bounds. */
function createForm(context: AppContext, created: () => void): HTMLElement {
  const route = h('select', { name: 'route', id: 'create-route' });
  const fill = () => show(route, context.routes.map((r) => h('option', { value: r.id }, `${tokenName(r.adToken, context)} → ${tokenName(r.orderToken, context)}`)));
  fill();
  const fund = h('input', { name: 'fund', id: 'create-fund', inputMode: 'decimal', required: true });
  const min = h('input', { name: 'min', id: 'create-min', inputMode: 'decimal' });
  const max = h('input', { name: 'max', id: 'create-max', inputMode: 'decimal' });
  const submitButton = h('button', { type: 'submit' }, 'Create ad');
  const form = h('form', { class: 'create', 'aria-label': 'Create an ad' },
    h('label', { for: 'create-route' }, 'Route'), route,
    h('label', { for: 'create-fund' }, 'Fund with'), fund,
    h('label', { for: 'create-min' }, 'Minimum deposit'), min,
    h('label', { for: 'create-max' }, 'Maximum deposit'), max,
    submitButton);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void context.act('Create ad', async () => {
      const chosen = context.routes.find((r) => r.id === route.value);
      if (!chosen) throw new UserError('Choose a route.');
      const adChain = chosen.adToken.chain.chainId;
      const orderKind = chainOf(context, chosen.orderToken.chain.chainId)?.kind ?? 'EVM';
      const payee = orderKind === 'EVM' ? context.evm?.address : context.stellar?.address;
      if (!payee) throw new UserError(`Connect ${orderKind === 'EVM' ? 'an EVM wallet' : 'Freighter'}: you are paid on ${chosen.orderToken.chain.name}.`);
      const amount = parseAmount(fund.value, chosen.adToken.decimals);
      const bound = (input: HTMLInputElement) => (input.value.trim() ? parseAmount(input.value, chosen.orderToken.decimals).toString() : null);
      const { session } = context;
      // The wallet on the ad chain before anything is asked of the API (a wallet that cannot switch is named first).
      await ready(context, adChain);
      const signed = await session.call(() => session.api.POST('/v1/ads/create', {
        body: { routeId: chosen.id, creatorDstAddress: payee, fundAmount: amount.toString(), minAmount: bound(min), maxAmount: bound(max), metadata: null },
        params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
      }));
      await approveFor(context, adChain, chosen.adToken, signed.contractAddress, amount);
      await sendAndConfirm(context, adChain, 'createAd', signed, { kind: 'ad', id: signed.adId });
      form.reset();
      created();
    }, submitButton);
  });
  (form as HTMLElement & { fill?: () => void }).fill = fill;
  return form;
}
