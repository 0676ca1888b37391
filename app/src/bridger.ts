import { followTrade, type Schemas } from '@cross-chain-relayer/client';
import { formatAmount, parseAmount } from './amounts.ts';
import { chainOf, tokenName, type AppContext } from './context.ts';
import { h, show } from './dom.ts';
import { apiError, UserError } from './errors.ts';
import { tradeLabel } from './labels.ts';
import { API_BASE } from './session.ts';
import { approveFor, confirm, onChain, ready, sendAndConfirm, signUnlock } from './steps.ts';

type Trade = Schemas['Trade'];
const CURRENT = 'relayer.trade';

/** The proof takes one to three minutes (the spec): the estimate shown while it is made. */
const PROOF_ESTIMATE_SECONDS = 120;

/**
 * The Bridger's page: route and amount, the quote (what is deposited, what is received, from which
 * ad, until when), create, deposit, then the trade's steps as the event stream tells them (proof
 * progress with an estimate, the unlock when it is the Bridger's, the claims, the final balance).
 * The trade's id is kept (localStorage and the address's #trade=) so a reload finds it again; a
 * trade is also found by its id, order hash or deposit transaction hash.
 */
export function bridgerView(context: AppContext): HTMLElement {
  const route = h('select', { name: 'route', id: 'bridge-route' });
  const fill = () => show(route, context.routes.map((r) => h('option', { value: r.id }, `${tokenName(r.orderToken, context)} → ${tokenName(r.adToken, context)}`)));
  fill();
  const amount = h('input', { name: 'amount', id: 'bridge-amount', inputMode: 'decimal' });
  const quoteRegion = h('div', { class: 'quote', 'aria-live': 'polite' });
  const tradeRegion = h('div', { class: 'trade', 'aria-live': 'polite' });
  const lookup = h('input', { name: 'lookup', id: 'trade-lookup', placeholder: 'trade id, order hash or deposit tx hash', size: 40 });
  let quote: { routeId: string; best: Schemas['AdQuote']; route: Schemas['Route'] } | undefined;
  let following: AbortController | undefined;
  let trade: Trade | undefined;
  let proofReady = false;
  let lockedAt: number | undefined;
  let finalBalance: string | undefined;

  const quoteButton = h('button', { type: 'submit' }, 'Get a quote');
  const form = h('form', { class: 'bridge', 'aria-label': 'Bridge' },
    h('label', { for: 'bridge-route' }, 'Route'), route,
    h('label', { for: 'bridge-amount' }, 'You deposit'), amount,
    quoteButton);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void context.act('Quote', async () => {
      const chosen = context.routes.find((r) => r.id === route.value);
      if (!chosen) throw new UserError('Choose a route.');
      const units = parseAmount(amount.value, chosen.orderToken.decimals);
      const answer = await context.session.anyone.GET('/v1/quotes', { params: { query: { routeId: chosen.id, amount: units.toString() } } });
      if (!answer.data) throw apiError(answer.error, answer.response.status);
      const best = answer.data.quotes[0];
      if (!best) {
        quote = undefined;
        show(quoteRegion, h('p', { class: 'unavailable' }, 'No ad can take this deposit now: ', answer.data.unavailable.map((u) => u.message).join('; ') || 'no ad on this route.'));
        return;
      }
      quote = { routeId: chosen.id, best, route: chosen };
      const bridgeButton: HTMLButtonElement = h('button', { type: 'button', onclick: () => void context.act('Bridge', () => bridge(), bridgeButton) }, 'Bridge');
      show(quoteRegion, h('dl', { class: 'quote-terms' },
        h('dt', null, 'You deposit'), h('dd', { 'data-field': 'deposit' }, `${formatAmount(best.orderAmount, chosen.orderToken.decimals)} ${tokenName(chosen.orderToken, context)}`),
        h('dt', null, 'You receive'), h('dd', { 'data-field': 'receive' }, `${formatAmount(best.adAmount, chosen.adToken.decimals)} ${tokenName(chosen.adToken, context)}`),
        h('dt', null, 'From ad'), h('dd', { 'data-field': 'ad' }, best.adId),
        h('dt', null, 'Deposit before'), h('dd', null, new Date(best.reservationExpiresAt).toLocaleTimeString())), bridgeButton);
    }, quoteButton);
  });

  async function bridge(): Promise<void> {
    if (!quote) throw new UserError('Get a quote first.');
    const { best, route: chosen } = quote;
    const adKind = chainOf(context, chosen.adToken.chain.chainId)?.kind ?? 'EVM';
    const payee = adKind === 'EVM' ? context.evm?.address : context.stellar?.address;
    if (!payee) throw new UserError(`Connect ${adKind === 'EVM' ? 'an EVM wallet' : 'Freighter'}: you are paid on ${chosen.adToken.chain.name}.`);
    const orderChain = chosen.orderToken.chain.chainId;
    await ready(context, orderChain);
    // create checks the deposit's allowance: approve the OrderPortal first (an ERC-20 deposit; a
    // Soroban deposit authorises its transfer inside its own transaction).
    if (chosen.orderToken.kind !== 'NATIVE' && chainOf(context, orderChain)?.kind !== 'STELLAR') {
      const portal = chainOf(context, orderChain)?.orderPortalAddress;
      if (!portal) throw new UserError(`No OrderPortal is known on ${chosen.orderToken.chain.name}.`);
      context.say('Approve the deposit in your wallet…');
      await approveFor(context, orderChain, chosen.orderToken, portal, BigInt(best.orderAmount));
    }
    const { session } = context;
    const created = await session.call(() => session.api.POST('/v1/trades/create', {
      body: { adId: best.adId, routeId: chosen.id, amount: best.orderAmount, bridgerDstAddress: payee },
      params: { header: { 'Idempotency-Key': crypto.randomUUID() } },
    }));
    remember(created.tradeId);
    await sendAndConfirm(context, orderChain, 'createOrder', created.reqContractDetails, { kind: 'trade', id: created.tradeId });
    await open(created.tradeId);
  }

  function remember(tradeId: string): void {
    localStorage.setItem(CURRENT, tradeId);
    history.replaceState(null, '', `#/bridge?trade=${tradeId}`);
  }

  /** Shows `tradeId` and follows its stream to the end. */
  async function open(tradeId: string): Promise<void> {
    following?.abort();
    const answer = await context.session.anyone.GET('/v1/trades/{id}', { params: { path: { id: tradeId } } });
    if (!answer.data) throw apiError(answer.error, answer.response.status);
    trade = answer.data;
    proofReady = false;
    finalBalance = undefined;
    remember(tradeId);
    render();
    const stop = new AbortController();
    following = stop;
    void followTrade(tradeId, {
      baseUrl: API_BASE,
      signal: stop.signal,
      onEvent: async (event) => {
        const data = event.data.data as { proofReady?: boolean; status?: string };
        if (data.proofReady) proofReady = true;
        const fresh = await context.session.anyone.GET('/v1/trades/{id}', { params: { path: { id: tradeId } } });
        if (fresh.data) trade = fresh.data;
        if (trade?.status === 'LOCKED' && lockedAt === undefined) lockedAt = Date.now();
        if (trade?.status === 'SETTLED') await readFinalBalance();
        render();
      },
    }).catch((error) => context.say(`Live updates of the trade stopped: ${String((error as Error).message ?? error)}`, 'error'));
  }

  async function readFinalBalance(): Promise<void> {
    if (!trade || !context.evm) return;
    const token = trade.route?.adToken;
    if (!token) return;
    try {
      const wallet = context.evm;
      if (await wallet.chainId() !== trade.adChainId) return void (finalBalance = undefined);
      finalBalance = `${formatAmount(await wallet.balanceOf(token.address), token.decimals)} ${token.symbol}`;
    } catch { finalBalance = undefined; }
  }

  async function unlock(): Promise<void> {
    if (!trade?.orderHash) throw new UserError('The trade has no order hash yet.');
    const current = trade;
    // The Bridger's unlock pays the Maker on the order chain: that chain's wallet signs it.
    const signature = await signUnlock(context, current.orderChainId, current.orderHash!);
    const { session } = context;
    const signed = await confirm(context, () => session.api.POST('/v1/trades/{id}/unlock', { params: { path: { id: current.id } }, body: { signature } }));
    await sendAndConfirm(context, signed.chainId, 'unlock', signed, { kind: 'unlock', id: current.id });
    // Back to the chain where the Bridger was paid, for the final balance.
    await onChain(context, current.adChainId).catch(() => undefined);
    await readFinalBalance();
    render();
  }

  function render(): void {
    if (!trade) { show(tradeRegion); return; }
    const t = trade;
    const done = (step: string) => t.transactions.some((tx) => tx.step === step);
    const proofText = t.status !== 'LOCKED' && t.status !== 'SETTLED' ? 'after the lock'
      : proofReady || t.bridgerClaimed || t.status === 'SETTLED' ? 'ready'
        : `being generated (about ${PROOF_ESTIMATE_SECONDS / 60} minutes${lockedAt ? `, ${Math.round((Date.now() - lockedAt) / 1000)} s so far` : ''})`;
    const steps: [string, boolean | string][] = [
      ['Reserved', true],
      ['Deposited', done('deposit') || t.status !== 'PENDING'],
      ['Locked by the Maker', done('lock') || t.status === 'LOCKED' || t.status === 'SETTLED'],
      ['Proof', proofText === 'ready' ? true : proofText],
      ['You are paid (ad chain)', t.bridgerClaimed],
      ['The Maker is paid (order chain)', t.adCreatorClaimed],
      ['Settled', t.status === 'SETTLED'],
    ];
    const label = tradeLabel(t.status);
    const unlockButton: HTMLButtonElement = h('button', { type: 'button', onclick: () => void context.act('Unlock', unlock, unlockButton) }, 'Unlock');
    const route = t.route;
    show(tradeRegion,
      h('h3', null, 'Trade ', h('code', { 'data-field': 'trade-id' }, t.id)),
      h('p', null, h('span', { class: `label label-${label.toLowerCase()}`, 'data-field': 'label' }, label), ' ', h('span', { class: 'api-status', 'data-field': 'status' }, t.status)),
      h('ol', { class: 'steps' }, steps.map(([name, value]) => h('li', { class: value === true ? 'done' : value === false ? 'todo' : 'info' }, name, typeof value === 'string' ? `: ${value}` : value ? ' ✓' : ''))),
      t.unlockDue === 'BRIDGER' && t.status === 'LOCKED' ? h('p', null, 'Your unlock is due (it pays the Maker on the order chain). ', unlockButton) : null,
      t.status === 'EXPIRED' ? h('p', { class: 'status error' }, 'This trade expired: if you deposited, refund it from the order chain after its refund time.') : null,
      t.status === 'SETTLED' && route ? h('p', { 'data-field': 'final' }, 'Settled: both sides are paid. ',
        finalBalance ? h('span', null, `Your balance on ${route.adToken.chain.name}: `, h('strong', { 'data-field': 'final-balance' }, finalBalance)) : null) : null);
  }

  const findButton = h('button', { type: 'submit' }, 'Find');
  const finder = h('form', { class: 'find', 'aria-label': 'Find a trade' }, h('label', { for: 'trade-lookup' }, 'Find a trade'), lookup, findButton);
  finder.addEventListener('submit', (event) => {
    event.preventDefault();
    void context.act('Find the trade', async () => {
      const key = lookup.value.trim();
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key)) return open(key);
      if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key)) throw new UserError('Enter a trade id (a UUID), an order hash or a transaction hash (64 hex digits).');
      const { anyone } = context.session;
      for (const query of [{ orderHash: key }, { txHash: key.toLowerCase() }]) {
        const found = await anyone.GET('/v1/trades/all', { params: { query } });
        const first = found.data?.data[0];
        if (first) return open(first.id);
      }
      throw new UserError('No trade has this id, order hash or transaction hash.');
    }, findButton);
  });

  const root = h('section', { class: 'bridger', 'aria-labelledby': 'bridger-title' },
    h('h2', { id: 'bridger-title' }, 'Bridge'), form, quoteRegion, tradeRegion, finder);
  // After a reload: the trade in the address, or the last one opened here.
  const fromAddress = new URLSearchParams(location.hash.split('?')[1] ?? '').get('trade');
  const resume = fromAddress ?? localStorage.getItem(CURRENT);
  if (resume) void context.act('Load the trade', () => open(resume));
  (root as HTMLElement & { refresh?: () => void }).refresh = fill;
  return root;
}
