import { followTrade, RelayerCallError, type Schemas } from '@cross-chain-relayer/client';
import { executeTrade, resumeTrade, type ExecuteOptions, type TradeRecord, type TradeResult } from '@cross-chain-relayer/client/execute';
import { formatAmount, parseAmount } from './amounts.ts';
import { chainOf, tokenName, type AppContext } from './context.ts';
import { h, show } from './dom.ts';
import { apiError, UserError } from './errors.ts';
import { tradeLabel } from './labels.ts';
import { API_BASE } from './session.ts';
import { progressSentence, recordOf, tradeStore, tradeWallets, unfinishedRecord } from './execute.ts';
import { confirm, onChain, ready, sendAndConfirm, signUnlock } from './steps.ts';

type Trade = Schemas['Trade'];
const CURRENT = 'relayer.trade';

/** The proof takes one to three minutes (the spec): the estimate shown while it is made. */
const PROOF_ESTIMATE_SECONDS = 120;

/**
 * How long the page lets the Maker's unlock stay owed before executeTrade takes the ad side itself:
 * 15 minutes from when it first saw it owed, which is from the lock, so the proof's minutes count
 * (the "Take the ad side" button does it at once; the relayer's keeper, where it runs, after its own grace).
 */
const MAKER_GRACE_MS = 900_000;

/** The reason a run is stopped to be started again at once (the ad side or the refund taken now). */
const RESTART = 'restarted by the page';

/** One executeTrade/resumeTrade under way: its record's key, its stop, how it ends. */
interface Run { key: string; stop: AbortController; finished: Promise<TradeResult | undefined> }

/**
 * The Bridger's page: route and amount, the quote (what is deposited, what is received, from which
 * ad, until when), create, deposit, then the trade's steps as the event stream tells them (proof
 * progress with an estimate, the unlock when it is the Bridger's, the claims, the final balance).
 * The trade's id is kept (localStorage and the address's #trade=) so a reload finds it again; a
 * trade is also found by its id, order hash or deposit transaction hash.
 */
export function bridgerView(context: AppContext): HTMLElement {
  const route = h('select', { name: 'route', id: 'bridge-route' });
  const fill = () => {
    const chosen = route.value;
    show(route, context.routes.map((r) => h('option', { value: r.id }, `${tokenName(r.orderToken, context)} → ${tokenName(r.adToken, context)}`)));
    if (chosen) route.value = chosen;
  };
  fill();
  const amount = h('input', { name: 'amount', id: 'bridge-amount', inputMode: 'decimal' });
  const quoteRegion = h('div', { class: 'quote', 'aria-live': 'polite' });
  const tradeRegion = h('div', { class: 'trade', 'aria-live': 'polite' });
  const lookup = h('input', { name: 'lookup', id: 'trade-lookup', placeholder: 'trade id, order hash or deposit tx hash', size: 40 });
  let quote: { answer: Schemas['Quote']; best: Schemas['AdQuote']; route: Schemas['Route'] } | undefined;
  let run: Run | undefined;
  /** The record of the trade shown, when this page drives it (executeTrade's store). */
  let record: TradeRecord | undefined;
  let following: AbortController | undefined;
  let trade: Trade | undefined;
  let proofReady = false;
  let lockedAt: number | undefined;
  let finalBalance: string | undefined;
  /** The refund time of a trade shown without a record (its order, read from the service). */
  let foundRefundTime: string | undefined;

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
      quote = { answer: answer.data, best, route: chosen };
      const bridgeButton: HTMLButtonElement = h('button', { type: 'button', onclick: () => void context.act('Bridge', () => bridge(), bridgeButton) }, 'Bridge');
      show(quoteRegion, h('dl', { class: 'quote-terms' },
        h('dt', null, 'You deposit'), h('dd', { 'data-field': 'deposit' }, `${formatAmount(best.orderAmount, chosen.orderToken.decimals)} ${tokenName(chosen.orderToken, context)}`),
        h('dt', null, 'You receive'), h('dd', { 'data-field': 'receive' }, `${formatAmount(best.adAmount, chosen.adToken.decimals)} ${tokenName(chosen.adToken, context)}`),
        h('dt', null, 'From ad'), h('dd', { 'data-field': 'ad' }, best.adId),
        h('dt', null, 'Deposit before'), h('dd', null, new Date(best.reservationExpiresAt).toLocaleTimeString())), bridgeButton);
    }, quoteButton);
  });

  /**
   * Bridge: the client's executeTrade from the quote, the whole trade as the Bridger (approve,
   * create under a key kept before it is sent, deposit, confirm, the unlock when due, the ad side
   * if the Maker stalls, the refund after an expiry), its progress on the status line. A click
   * after a run stopped before the trade was created resumes that record (the same
   * Idempotency-Key), never a second reservation.
   */
  async function bridge(): Promise<void> {
    if (!quote) throw new UserError('Get a quote first.');
    const { best, route: chosen, answer } = quote;
    const adKind = chainOf(context, chosen.adToken.chain.chainId)?.kind ?? 'EVM';
    const payee = adKind === 'EVM' ? context.evm?.address : context.stellar?.address;
    if (!payee) throw new UserError(`Connect ${adKind === 'EVM' ? 'an EVM wallet' : 'Freighter'}: you are paid on ${chosen.adToken.chain.name}.`);
    // The wallet readied for the order chain before anything is asked of the API (a wallet that will not switch is named).
    await ready(context, chosen.orderToken.chain.chainId);
    const unsent = (await tradeStore.list()).find((kept) => !kept.tradeId && !kept.outcome && kept.request.adId === best.adId
      && kept.request.routeId === chosen.id && kept.request.amount === best.orderAmount && kept.request.bridgerDstAddress === payee);
    if (unsent) await start(unsent.key, (options) => resumeTrade(context.session.api, tradeStore, { ...options, key: unsent.key }));
    else {
      const key = crypto.randomUUID();
      await start(key, (options) => executeTrade(context.session.api, answer, { ...options, key, adId: best.adId, recipient: payee }));
    }
  }

  /**
   * Starts a run (stopping the one under way, if any) and resolves when the trade is over for the
   * Bridger; a run stopped to be started again resolves with the run that replaced it.
   */
  function start(key: string, begin: (options: ExecuteOptions) => Promise<TradeResult | undefined>, resumed = false): Promise<TradeResult | undefined> {
    run?.stop.abort(RESTART);
    const stop = new AbortController();
    const current: Run = { key, stop, finished: Promise.resolve(undefined) };
    run = current;
    const before = new Set<string>();
    current.finished = (async () => {
      const kept = await tradeStore.get(key);
      if (resumed && kept) for (const hash of Object.values(kept.tx)) if (hash) before.add(hash);
      try {
        const result = await begin({
          ...tradeWallets(context), store: tradeStore, signal: stop.signal, fetch: context.session.fetch, makerGraceMs: MAKER_GRACE_MS,
          onProgress: (progress) => {
            const sentence = progressSentence(progress, before);
            if (sentence) context.say(sentence);
            if (!progress.trade) return;
            if (trade?.id !== progress.trade.id) void open(progress.trade.id);
            trade = progress.trade;
            render();
          },
        });
        if (result?.outcome === 'SETTLED' && result.trade.adChainId && chainOf(context, result.trade.adChainId)?.kind === 'EVM') {
          // Back to the chain where the Bridger was paid, for the final balance.
          await onChain(context, result.trade.adChainId).catch(() => undefined);
          await readFinalBalance();
        }
        return result;
      } catch (error) {
        // Replaced by another run (the ad side or the refund taken now): this one ends with it.
        if (stop.signal.aborted && stop.signal.reason === RESTART && run !== current && run) return run.finished;
        throw error instanceof RelayerCallError ? apiError(error.body, error.status) : error;
      } finally {
        if (run === current) run = undefined;
        if (trade) record = await recordOf(trade.id);
        render();
      }
    })();
    return current.finished;
  }

  /**
   * Takes the ad side now (the Maker's unlock is due and unsent): this trade's run resumed with no
   * grace left; a trade this page holds no record of (found by its id or a hash) is taken up from
   * what the service says of it (`resumeTrade` with its `tradeId`), by its Bridger only.
   */
  async function takeAdSide(): Promise<void> {
    await carryOn({ makerGraceMs: 0 });
  }

  /**
   * Continues the trade (after a reload, a wallet connected late, a stopped run), which sends the
   * refund once the order chain passes refundTime; a found trade is taken up as for the ad side.
   */
  async function continueRun(): Promise<void> {
    await carryOn({});
  }

  async function carryOn(extra: Pick<ExecuteOptions, 'makerGraceMs'>): Promise<void> {
    const shown = trade;
    if (!shown) throw new UserError('No trade is shown.');
    const kept = record?.tradeId === shown.id ? record.key : undefined;
    if (kept) {
      await start(kept, (options) => resumeTrade(context.session.api, tradeStore, { ...options, ...extra, key: kept }), true);
      return;
    }
    const refusal = notTheBridger(shown);
    if (refusal) throw new UserError(refusal);
    const key = crypto.randomUUID();
    await start(key, (options) => resumeTrade(context.session.api, tradeStore, { ...options, ...extra, key, tradeId: shown.id }));
  }

  /**
   * Why the page may not act for `t`'s Bridger, or undefined when it may: the user signed in and
   * the wallet connected on the order chain (where the Bridger deposited) must both be the trade's
   * Bridger, whose wallet signs its unlocks and sends its refund.
   */
  function notTheBridger(t: Trade): string | undefined {
    const kind = chainOf(context, t.orderChainId)?.kind ?? 'EVM';
    const same = (a: string | undefined) => a !== undefined && (kind === 'EVM' ? a.toLowerCase() === t.bridgerAddress.toLowerCase() : a === t.bridgerAddress);
    const walletName = kind === 'EVM' ? 'an EVM wallet' : 'Freighter';
    const connected = kind === 'EVM' ? context.evm?.address : context.stellar?.address;
    const only = `Only this trade's Bridger (${t.bridgerAddress}) can do this`;
    if (!connected) return `${only}: connect ${walletName} with that account and sign in with it.`;
    if (!same(connected)) return `${only}: the connected wallet is ${connected}.`;
    if (!same(context.session.address(kind))) return `${only}: sign in with that account (the page is ${context.session.user ? 'signed in as another user' : 'not signed in'}).`;
    return undefined;
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
    record = await recordOf(tradeId);
    foundRefundTime = undefined;
    // A trade found here without a record: its refund time from its order, when its Bridger is signed in.
    if (!record && context.session.user && !notTheBridger(answer.data)) {
      const params = await context.session.api.GET('/v1/trades/{id}/params', { params: { path: { id: tradeId } } }).catch(() => undefined);
      foundRefundTime = params?.data?.refundTime;
    }
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
    const button = (text: string, action: () => Promise<void>) => {
      const element: HTMLButtonElement = h('button', { type: 'button', onclick: () => void context.act(text, action, element) }, text);
      return element;
    };
    const route = t.route;
    const kept = record && record.tradeId === t.id ? record : undefined;
    // A trade this page drives: its run takes each turn; one it only found: the Bridger's unlock by hand.
    const byHand = !kept && !run && t.unlockDue === 'BRIDGER' && t.status === 'LOCKED';
    // A trade found without a record is offered the ad side and the refund too, from what the service says of it.
    const adSide = !kept?.outcome && t.status === 'LOCKED' && t.unlockDue === 'MAKER' && t.unlockableBy.includes('BRIDGER');
    const deposited = done('deposit') || Boolean(kept?.tx.deposit);
    const refunded = done('refund') || kept?.outcome === 'REFUNDED';
    const refundTime = kept?.order?.orderParams.refundTime ?? foundRefundTime;
    const refundable = t.status === 'EXPIRED' && deposited && !refunded && !t.adCreatorClaimed;
    // Only the trade's Bridger may take its ad side or refund it: anyone else is told why, with no button.
    const refusal = !kept && (adSide || refundable) && !run ? notTheBridger(t) : undefined;
    const offer = (text: string, action: () => Promise<void>) => (refusal
      ? h('span', { class: 'status error', 'data-field': 'not-bridger' }, refusal) : button(text, action));
    const stalled = kept && !kept.outcome && !run && !adSide && !refundable && t.status !== 'SETTLED' && t.status !== 'EXPIRED';
    const keeper = 'The relayer also sends it for you after a grace if you do not (its keeper, where the operator runs it); you may do it sooner yourself.';
    show(tradeRegion,
      h('h3', null, 'Trade ', h('code', { 'data-field': 'trade-id' }, t.id)),
      h('p', null, h('span', { class: `label label-${label.toLowerCase()}`, 'data-field': 'label' }, label), ' ', h('span', { class: 'api-status', 'data-field': 'status' }, t.status)),
      h('ol', { class: 'steps' }, steps.map(([name, value]) => h('li', { class: value === true ? 'done' : value === false ? 'todo' : 'info' }, name, typeof value === 'string' ? `: ${value}` : value ? ' ✓' : ''))),
      byHand ? h('p', null, 'Your unlock is due (it pays the Maker on the order chain). ', button('Unlock', unlock)) : null,
      adSide ? h('p', { 'data-field': 'ad-side' }, 'The proof is ready and the Maker has not unlocked yet. You can take the ad side yourself: it pays you on ',
        `${route?.adToken.chain.name ?? 'the ad chain'} (you send the transaction). ${run ? `The page does it by itself ${MAKER_GRACE_MS / 60_000} minutes after the lock. ` : ''}${keeper} `,
        offer('Take the ad side', takeAdSide)) : null,
      refundable ? h('p', { 'data-field': 'refund' }, `This trade expired with your deposit on ${route?.orderToken.chain.name ?? 'the order chain'}: it can be refunded to you `,
        refundTime ? `from ${new Date(Number(refundTime) * 1000).toLocaleString()} (the order chain's clock). ` : 'after its refund time. ',
        `${keeper} `, run ? h('span', null, 'The page refunds it when the time comes.') : offer('Refund', continueRun)) : null,
      t.status === 'EXPIRED' && !refundable ? h('p', { class: 'status error' }, refunded ? 'This trade expired; your deposit was refunded.' : 'This trade expired before a deposit: nothing to refund.') : null,
      stalled ? h('p', null, 'This page kept the trade: continue it from where it stopped. ', button('Continue the trade', continueRun)) : null,
      t.transactions.length ? h('ul', { class: 'transactions', 'data-field': 'transactions' }, t.transactions.map((tx) => h('li', { 'data-step': tx.step },
        `${tx.step}: `, h('code', null, `${tx.txHash.slice(0, 10)}…`), tx.sentBy === 'relayer' ? h('span', { class: 'sent-by', 'data-field': 'sent-by-relayer' }, ' sent by the relayer') : null))) : null,
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
  void (async () => {
    // A trade this page was driving when it was reloaded: resumed from its kept record (resumeTrade),
    // a transaction sent but not confirmed confirmed now.
    const unfinished = context.session.user ? await unfinishedRecord() : undefined;
    if (unfinished?.tradeId && (!resume || resume === unfinished.tradeId)) {
      await context.act('Load the trade', () => open(unfinished.tradeId!));
      void context.act('Continue the trade', () => start(unfinished.key, (options) => resumeTrade(context.session.api, tradeStore, { ...options, key: unfinished.key }), true).then(() => undefined));
    } else if (resume) void context.act('Load the trade', () => open(resume));
  })();
  // Signed in or out: the trade shown read again (its order, when the user is now its Bridger); a wallet
  // connected: what it may do shown again (the ad side, the refund, or why not).
  (root as HTMLElement & { refresh?: () => void }).refresh = () => {
    fill();
    if (trade && !run) void open(trade.id).catch(() => render());
  };
  (root as HTMLElement & { walletsChanged?: () => void }).walletsChanged = () => render();
  return root;
}
