import { followTrade, RelayerCallError, type Schemas } from '@cross-chain-relayer/client';
import { executeTrade, resumeTrade, type ExecuteOptions, type TradeRecord, type TradeResult } from '@cross-chain-relayer/client/execute';
import { formatAmount, parseAmount } from './amounts.ts';
import { chainOf, tokenName, type AppContext } from './context.ts';
import { h, show } from './dom.ts';
import { apiError, UserError } from './errors.ts';
import { tradeLabel } from './labels.ts';
import { API_BASE } from './session.ts';
import { progressSentence, recordOf, tradeStore, tradeWallets, unfinishedRecord } from './execute.ts';
import { approveFor, confirm, onChain, ready, sendAndConfirm, signUnlock } from './steps.ts';

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
  const fill = () => show(route, context.routes.map((r) => h('option', { value: r.id }, `${tokenName(r.orderToken, context)} → ${tokenName(r.adToken, context)}`)));
  fill();
  const amount = h('input', { name: 'amount', id: 'bridge-amount', inputMode: 'decimal' });
  const quoteRegion = h('div', { class: 'quote', 'aria-live': 'polite' });
  const tradeRegion = h('div', { class: 'trade', 'aria-live': 'polite' });
  const lookup = h('input', { name: 'lookup', id: 'trade-lookup', placeholder: 'trade id, order hash or deposit tx hash', size: 40 });
  let quote: { answer: Schemas['Quote']; best: Schemas['AdQuote']; route: Schemas['Route'] } | undefined;
  let run: Run | undefined;
  /** The Idempotency-Key of a create by the page's own steps: one per quote, so a retried click is the same request. */
  let quoteKey = '';
  /** The record of the trade shown, when this page drives it (executeTrade's store). */
  let record: TradeRecord | undefined;
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
      quote = { answer: answer.data, best, route: chosen };
      quoteKey = crypto.randomUUID();
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
    // executeTrade sends Soroban transactions from the Bridger's own account: a fee payer ("Fees paid by") needs the page's own steps.
    const touchesStellar = [chosen.orderToken.chain.chainId, chosen.adToken.chain.chainId].some((id) => chainOf(context, id)?.kind === 'STELLAR');
    if (context.stellar?.feePayer && touchesStellar) return bridgeByHand(best, chosen, payee);
    const unsent = (await tradeStore.list()).find((kept) => !kept.tradeId && !kept.outcome && kept.request.adId === best.adId
      && kept.request.routeId === chosen.id && kept.request.amount === best.orderAmount && kept.request.bridgerDstAddress === payee);
    if (unsent) await start(unsent.key, (options) => resumeTrade(context.session.api, tradeStore, { ...options, key: unsent.key }));
    else {
      const key = crypto.randomUUID();
      await start(key, (options) => executeTrade(context.session.api, answer, { ...options, key, adId: best.adId, recipient: payee }));
    }
  }

  /**
   * The trade by the page's own steps, for a Bridger whose Soroban fees another account pays:
   * approve, create (under a key kept for this quote), deposit with the fee payer as the source,
   * confirm; the Bridger's unlock is then one click ("Unlock").
   */
  async function bridgeByHand(best: Schemas['AdQuote'], chosen: Schemas['Route'], payee: string): Promise<void> {
    const orderChain = chosen.orderToken.chain.chainId;
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
      params: { header: { 'Idempotency-Key': quoteKey } },
    }));
    remember(created.tradeId);
    await sendAndConfirm(context, orderChain, 'createOrder', created.reqContractDetails, { kind: 'trade', id: created.tradeId });
    await open(created.tradeId);
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

  /** Takes the ad side now (the Maker's unlock is due and unsent): this trade's run resumed with no grace left. */
  async function takeAdSide(): Promise<void> {
    const key = record?.key;
    if (!key) throw new UserError('This page did not start this trade: it holds no record to take the ad side from.');
    await start(key, (options) => resumeTrade(context.session.api, tradeStore, { ...options, key, makerGraceMs: 0 }), true);
  }

  /** Continues the trade this page kept (after a reload, a wallet connected late, or a stopped run). */
  async function continueRun(): Promise<void> {
    const key = record?.key;
    if (!key) throw new UserError('This page holds no record of this trade.');
    await start(key, (options) => resumeTrade(context.session.api, tradeStore, { ...options, key }), true);
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
    const byHand = !kept && t.unlockDue === 'BRIDGER' && t.status === 'LOCKED';
    const adSide = kept && !kept.outcome && t.status === 'LOCKED' && t.unlockDue === 'MAKER' && t.unlockableBy.includes('BRIDGER');
    const deposited = done('deposit') || Boolean(kept?.tx.deposit);
    const refunded = done('refund') || kept?.outcome === 'REFUNDED';
    const refundTime = kept?.order?.orderParams.refundTime;
    const refundable = t.status === 'EXPIRED' && deposited && !refunded && !t.adCreatorClaimed;
    const stalled = kept && !kept.outcome && !run && !adSide && !refundable && t.status !== 'SETTLED' && t.status !== 'EXPIRED';
    const keeper = 'The relayer also sends it for you after a grace if you do not (its keeper, where the operator runs it); you may do it sooner yourself.';
    show(tradeRegion,
      h('h3', null, 'Trade ', h('code', { 'data-field': 'trade-id' }, t.id)),
      h('p', null, h('span', { class: `label label-${label.toLowerCase()}`, 'data-field': 'label' }, label), ' ', h('span', { class: 'api-status', 'data-field': 'status' }, t.status)),
      h('ol', { class: 'steps' }, steps.map(([name, value]) => h('li', { class: value === true ? 'done' : value === false ? 'todo' : 'info' }, name, typeof value === 'string' ? `: ${value}` : value ? ' ✓' : ''))),
      byHand ? h('p', null, 'Your unlock is due (it pays the Maker on the order chain). ', button('Unlock', unlock)) : null,
      adSide ? h('p', { 'data-field': 'ad-side' }, 'The proof is ready and the Maker has not unlocked yet. You can take the ad side yourself: it pays you on ',
        `${route?.adToken.chain.name ?? 'the ad chain'} (you send the transaction). ${run ? `The page does it by itself ${MAKER_GRACE_MS / 60_000} minutes after the lock. ` : ''}${keeper} `,
        button('Take the ad side', takeAdSide)) : null,
      refundable ? h('p', { 'data-field': 'refund' }, `This trade expired with your deposit on ${route?.orderToken.chain.name ?? 'the order chain'}: it can be refunded to you `,
        refundTime ? `from ${new Date(Number(refundTime) * 1000).toLocaleString()} (the order chain's clock). ` : 'after its refund time. ',
        `${keeper} `, kept ? (run ? h('span', null, 'The page refunds it when the time comes.') : button('Refund', continueRun)) : null) : null,
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
  (root as HTMLElement & { refresh?: () => void }).refresh = fill;
  return root;
}
