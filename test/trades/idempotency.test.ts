import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey } from '../../db/repositories/idempotency-keys.ts';
import { requestFingerprint } from '../../api/middleware/idempotency.ts';
import { orderHashOf } from '../../client/order.js';
import { AD_CHAIN, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startScene, type Scene } from '../support/scene.ts';
import { call, loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * Issue 29 on the two-chain devnet, on each orchestrator: retries are safe (`Idempotency-Key` on the POSTs that create,
 * reserve or sign), and a trade whose create response was lost is found again by its order hash or
 * any of its verified transactions, with an order hash the client package computes itself.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();

describeOnEachOrchestrator('retries and lost answers', (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let bridgerUserId: string;
  let routeId: string;
  let adId: string;
  /** The ad's create transaction, confirmed in beforeAll. */
  let adCreateTx: string;

  interface Answer { status: number; text: string; body: any; headers: Headers }

  /** A JSON POST with an Idempotency-Key (or none), answering the raw text too: a replay must be the same bytes. */
  async function post(path: string, body: unknown, token: string, key?: string): Promise<Answer> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (key !== undefined) headers['idempotency-key'] = key;
    const response = await fetch(`${service.url}${path}`, { method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text), headers: response.headers };
  }

  const tradesOfBridger = async () => (await call(service, 'GET', `/v1/trades/all?bridgerAddress=${bridger.address}&limit=100`)).body.data as any[];
  const available = async () => (await call(service, 'GET', `/v1/ads/${adId}`)).body.availableAmount as string;
  const createBody = (amount: string) => ({ adId, routeId, amount, bridgerDstAddress: bridger.address });

  beforeAll(async () => {
    scene = await startScene({
      orchestrator,
      env: { IDEMPOTENCY_WAIT_SECONDS: '1', MAX_OPEN_RESERVATIONS_PER_WALLET: '100', MAX_OPEN_RESERVATIONS_PER_AD: '100' },
    });
    ({ service, devnet, makerToken, bridgerToken, bridgerUserId, routeId } = scene);
    // The Maker's ad, created with a key (a replay answers the same ad and call data).
    const adBody = { routeId, creatorDstAddress: maker.address, fundAmount: '100000' };
    const created = await post('/v1/ads/create', adBody, makerToken, 'ad-create-1');
    expect(created.status).toBe(200);
    const again = await post('/v1/ads/create', adBody, makerToken, 'ad-create-1');
    expect(again.text).toBe(created.text);
    adId = created.body.adId;
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 100000n);
    const txHash = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
    adCreateTx = txHash;
    expect((await post(`/v1/ads/${adId}/confirm`, { txHash }, makerToken, 'ad-confirm-1')).status).toBe(200);
    expect((await post(`/v1/ads/${adId}/confirm`, { txHash }, makerToken, 'ad-confirm-1')).headers.get('idempotent-replayed')).toBe('true');
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100000n);
  }, 300_000);

  afterAll(async () => {
    await scene?.close();
  });

  describe('Idempotency-Key', () => {
    it('two identical creates with one key make one trade and one reservation, and the second answer is the first', async () => {
      const before = await available();
      const first = await post('/v1/trades/create', createBody('100'), bridgerToken, 'create-once');
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      // The same body spelt in another key order is the same request.
      const { amount, ...rest } = createBody('100');
      const second = await post('/v1/trades/create', { amount, ...rest }, bridgerToken, 'create-once');
      expect(second.status).toBe(200);
      expect(second.text).toBe(first.text);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect((await tradesOfBridger()).filter((t) => t.id === first.body.tradeId)).toHaveLength(1);
      expect(await tradesOfBridger()).toHaveLength(1);
      expect(BigInt(before) - BigInt(await available())).toBe(100n);
    });

    it('refuses the same key with another body, naming Idempotency-Key, and changes nothing', async () => {
      const count = (await tradesOfBridger()).length;
      const before = await available();
      const other = await post('/v1/trades/create', createBody('101'), bridgerToken, 'create-once');
      expect(other.status).toBe(422);
      expect(other.body).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity' });
      expect(JSON.stringify(other.body.message)).toMatch(/Idempotency-Key 'create-once' was used for another request/);
      // Another path under the same key is another request too.
      const lock = await post(`/v1/trades/${(await tradesOfBridger())[0].id}/lock`, undefined, bridgerToken, 'create-once');
      expect(lock.status).toBe(422);
      expect((await tradesOfBridger()).length).toBe(count);
      expect(await available()).toBe(before);
    });

    it('makes one effect of concurrent duplicates: the others wait for the first answer (or are told to retry)', async () => {
      const count = (await tradesOfBridger()).length;
      const before = await available();
      const answers = await Promise.all(Array.from({ length: 6 }, () => post('/v1/trades/create', createBody('7'), bridgerToken, 'create-burst')));
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      for (const answer of answers) {
        if (answer.status === 200) expect(answer.text).toBe(ok[0]!.text);
        else {
          expect(answer.status).toBe(409);
          expect(answer.headers.get('retry-after')).toBe('1');
        }
      }
      expect((await tradesOfBridger()).length).toBe(count + 1);
      expect(BigInt(before) - BigInt(await available())).toBe(7n);
      // Once the first has answered, every retry gets its answer.
      expect((await post('/v1/trades/create', createBody('7'), bridgerToken, 'create-burst')).text).toBe(ok[0]!.text);
    });

    it('answers 409 with Retry-After while the first request with the key is still running', async () => {
      const body = createBody('9');
      // The first request, as another replica holds it: claimed, not answered.
      const fingerprint = requestFingerprint('POST', '/v1/trades/create', body);
      expect(await claimIdempotencyKey(service.db.knex, { userId: bridgerUserId, key: 'in-flight', fingerprint, ttlSeconds: 60, staleAfterSeconds: 120, takeOverStale: false, maxKeysPerUser: 1000 }))
        .toMatchObject({ kind: 'claimed' });
      const count = (await tradesOfBridger()).length;
      const waiting = await post('/v1/trades/create', body, bridgerToken, 'in-flight');
      expect(waiting.status).toBe(409);
      expect(waiting.headers.get('retry-after')).toBe('1');
      expect(waiting.body.message).toMatch(/Idempotency-Key 'in-flight': the first request with this key is still running/);
      expect((await tradesOfBridger()).length).toBe(count);
    });

    it('does not run a trade create again under a key whose first request died unfinished (2 minutes): 409, one effect; and forgets keys after 24 hours', async () => {
      const body = createBody('19');
      const fingerprint = requestFingerprint('POST', '/v1/trades/create', body);
      const knex = service.db.knex;
      await claimIdempotencyKey(knex, { userId: bridgerUserId, key: 'died', fingerprint, ttlSeconds: 86_400, staleAfterSeconds: 120, takeOverStale: false, maxKeysPerUser: 1000 });
      await knex('idempotency_keys').where({ key: 'died' }).update({ started_at: knex.raw(`now() - interval '3 minutes'`) });
      const count = (await tradesOfBridger()).length;
      const abandoned = await post('/v1/trades/create', body, bridgerToken, 'died');
      expect(abandoned.status).toBe(409);
      expect(abandoned.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE', message: expect.stringMatching(/stopped before its answer was stored, and it may have taken effect/) });
      expect((await tradesOfBridger()).length).toBe(count);
      // Past its 24 hours a key is free for any request, and the purge deletes it.
      await knex('idempotency_keys').where({ key: 'died' }).update({ expires_at: knex.raw(`now() - interval '1 second'`) });
      expect((await post('/v1/trades/create', createBody('21'), bridgerToken, 'died')).status).toBe(200);
      await knex('idempotency_keys').where({ key: 'create-once' }).update({ expires_at: knex.raw(`now() - interval '1 second'`) });
      expect((await service.container.authPurger.runOnce()).idempotencyKeys).toBe(1);
      expect(await knex('idempotency_keys').where({ key: 'create-once' }).first()).toBeUndefined();
    });

    it('runs a confirm again under a key whose first request died unfinished: the same txHash is a duplicate, so no second effect', async () => {
      const knex = service.db.knex;
      const path = `/v1/ads/${adId}/confirm`;
      const body = { txHash: adCreateTx };
      const makerUserId = (await knex('idempotency_keys').where({ key: 'ad-confirm-1' }).first('user_id')).user_id;
      await claimIdempotencyKey(knex, { userId: makerUserId, key: 'confirm-died', fingerprint: requestFingerprint('POST', path, body), ttlSeconds: 86_400, staleAfterSeconds: 120, takeOverStale: true, maxKeysPerUser: 1000 });
      await knex('idempotency_keys').where({ key: 'confirm-died' }).update({ started_at: knex.raw(`now() - interval '3 minutes'`) });
      const before = (await call(service, 'GET', `/v1/ads/${adId}`)).body;
      expect((await post(path, body, makerToken, 'confirm-died')).status).toBe(200);
      expect((await call(service, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: before.poolAmount, availableAmount: before.availableAmount });
    });

    it('makes one effect when the answer of a committed trade create is lost (its store fails): the retry after the lease is 409, never a second reservation', async () => {
      const knex = service.db.knex;
      // An injected failure in the store step, in PostgreSQL itself: the answer of this key cannot be written.
      await knex.raw(`CREATE FUNCTION lose_answer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = 'lost-answer' AND NEW.status_code IS NOT NULL THEN RAISE EXCEPTION 'injected: the answer is lost'; END IF; RETURN NEW; END $$`);
      await knex.raw('CREATE TRIGGER lose_answer BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION lose_answer()');
      try {
        const body = createBody('23');
        const count = (await tradesOfBridger()).length;
        const first = await post('/v1/trades/create', body, bridgerToken, 'lost-answer');
        expect(first.status).toBe(200);
        expect((await tradesOfBridger()).length).toBe(count + 1);
        // Within the lease the key is still running; after it (the process looks dead) it is abandoned. Neither runs again.
        expect((await post('/v1/trades/create', body, bridgerToken, 'lost-answer')).status).toBe(409);
        await knex('idempotency_keys').where({ key: 'lost-answer' }).update({ started_at: knex.raw(`now() - interval '3 minutes'`) });
        const retry = await post('/v1/trades/create', body, bridgerToken, 'lost-answer');
        expect(retry.status).toBe(409);
        expect(retry.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
        expect((await tradesOfBridger()).length).toBe(count + 1);
        // The lost answer is found again from the effect's own record: the trade, by its order hash.
        const made = await call(service, 'GET', `/v1/trades/all?orderHash=${first.body.reqContractDetails.orderHash}`);
        expect(made.body.data.map((t: { id: string }) => t.id)).toEqual([first.body.tradeId]);
      } finally {
        await knex.raw('DROP TRIGGER lose_answer ON idempotency_keys');
        await knex.raw('DROP FUNCTION lose_answer()');
      }
    });

    it('keeps keys per user: the same key from two users is two requests', async () => {
      const ad = await post('/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '5' }, makerToken, 'shared-key');
      const trade = await post('/v1/trades/create', createBody('3'), bridgerToken, 'shared-key');
      expect(ad.status).toBe(200);
      expect(trade.status).toBe(200);
      expect(trade.body.tradeId).toBeDefined();
      expect(trade.headers.get('idempotent-replayed')).toBeNull();
    });

    it('keeps only successes: a refused request changed nothing, and its retry with the same key runs again', async () => {
      const [trade] = await tradesOfBridger();
      const body = { signature: signOrderHash(bridgerKey!.privateKey, trade.orderHash) };
      // Not LOCKED yet: 409, not stored.
      const early = await post(`/v1/trades/${trade.id}/unlock`, body, bridgerToken, 'unlock-early');
      expect(early.status).toBe(409);
      expect(await service.db.knex('idempotency_keys').where({ key: 'unlock-early' }).first()).toBeUndefined();
      const retried = await post(`/v1/trades/${trade.id}/unlock`, body, bridgerToken, 'unlock-early');
      expect(retried.status).toBe(409);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      // A body refused with 422, corrected and sent again under the same key, runs.
      const count = (await tradesOfBridger()).length;
      const refused = await post('/v1/trades/create', { ...createBody('17'), bridgerDstAddress: 'nowhere' }, bridgerToken, 'fix-and-retry');
      expect(refused.status).toBe(422);
      const corrected = await post('/v1/trades/create', createBody('17'), bridgerToken, 'fix-and-retry');
      expect(corrected.status).toBe(200);
      expect((await tradesOfBridger()).length).toBe(count + 1);
    });

    it('refuses a malformed key with 422 naming Idempotency-Key, before anything runs', async () => {
      const count = (await tradesOfBridger()).length;
      for (const key of ['', 'has space', 'x'.repeat(256), 'ünïcode', 'a,b']) {
        const answer = await post('/v1/trades/create', createBody('11'), bridgerToken, key);
        expect(answer.status, key).toBe(422);
        expect(JSON.stringify(answer.body.message), key).toMatch(/Idempotency-Key must be 1 to 255 characters/);
      }
      // The draft's structured-field form: a quoted string, the same key as bare.
      const quoted = await post('/v1/trades/create', createBody('11'), bridgerToken, '"quoted-key"');
      const bare = await post('/v1/trades/create', createBody('11'), bridgerToken, 'quoted-key');
      expect(bare.text).toBe(quoted.text);
      expect((await tradesOfBridger()).length).toBe(count + 1);
    });

    it('replays a webhook endpoint created with a key: one endpoint, the same secret', async () => {
      const body = { url: 'http://127.0.0.1:9/hook' };
      const first = await post('/v1/webhooks', body, bridgerToken, 'hook-1');
      expect(first.status).toBe(201);
      const second = await post('/v1/webhooks', body, bridgerToken, 'hook-1');
      expect(second.status).toBe(201);
      expect(second.body).toEqual(first.body);
      expect((await call(service, 'GET', '/v1/webhooks', undefined, bridgerToken)).body.data).toHaveLength(1);
    });

    it('lets every request without the header run as before', async () => {
      const count = (await tradesOfBridger()).length;
      await post('/v1/trades/create', createBody('13'), bridgerToken);
      await post('/v1/trades/create', createBody('13'), bridgerToken);
      expect((await tradesOfBridger()).length).toBe(count + 2);
    });
  });

  describe('recovery by hash', () => {
    it('finds a trade by its order hash and by its deposit, with the hash the client computes from /params', async () => {
      const created = await post('/v1/trades/create', createBody('50'), bridgerToken, 'recover-1');
      const { tradeId, reqContractDetails: order } = created.body;
      // The create answer is "lost": everything below comes from reads.
      const params = await call(service, 'GET', `/v1/trades/${tradeId}/params`, undefined, bridgerToken);
      expect(params.body).toEqual({ ...order.orderParams, orderHash: order.orderHash });
      expect(orderHashOf(params.body)).toBe(order.orderHash);
      const one = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body;
      expect(one).toMatchObject({ id: tradeId, orderHash: order.orderHash, transactions: [] });

      const byOrderHash = await call(service, 'GET', `/v1/trades/all?orderHash=${order.orderHash.toUpperCase().replace('0X', '0x')}`);
      expect(byOrderHash.body.data.map((t: any) => t.id)).toEqual([tradeId]);
      expect(byOrderHash.body.data[0].orderHash).toBe(order.orderHash);

      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      expect((await post(`/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken, 'recover-confirm')).status).toBe(200);
      const deposited = (await call(service, 'GET', `/v1/trades/${tradeId}`)).body;
      expect(deposited.transactions).toEqual([{ step: 'deposit', chainId: ORDER_CHAIN, txHash: depositTx.toLowerCase(), sentBy: 'bridger' }]);
      for (const spelling of [depositTx, depositTx.slice(2), depositTx.toUpperCase().replace('0X', '0x')]) {
        const found = await call(service, 'GET', `/v1/trades/all?txHash=${spelling}`);
        expect(found.status, spelling).toBe(200);
        expect(found.body.data.map((t: any) => t.id), spelling).toEqual([tradeId]);
        expect(found.body.data[0].transactions).toEqual(deposited.transactions);
      }
      // A hash nobody reported finds nothing; filters combine.
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${'ab'.repeat(32)}`)).body.data).toEqual([]);
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}&orderHash=${'0x' + 'ab'.repeat(32)}`)).body.data).toEqual([]);
    });

    it('gives the Bridger the deposit request create signed, the same one again, which deposits; then 409 once deposited', async () => {
      const created = await post('/v1/trades/create', createBody('60'), bridgerToken, 'recover-request');
      const { tradeId, reqContractDetails: signed } = created.body;
      // The create answer is "lost": the deposit request is read again, twice.
      const response = await service.request(`/v1/trades/${tradeId}/deposit-request`, { headers: { authorization: `Bearer ${bridgerToken}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toMatch(/private/);
      const again = await response.json();
      const { timeToExpire, ...rest } = again.reqContractDetails;
      const { timeToExpire: createdTtl, ...createdRest } = signed;
      expect(again.tradeId).toBe(tradeId);
      expect(rest).toEqual(createdRest); // the same authToken, reqHash, signature, order: never a second request
      expect(timeToExpire).toBeGreaterThan(0);
      expect(timeToExpire).toBeLessThanOrEqual(createdTtl);
      expect((await call(service, 'GET', `/v1/trades/${tradeId}/deposit-request`, undefined, bridgerToken)).body.reqContractDetails.authToken).toBe(signed.authToken);

      // Only the Bridger: the Maker and a stranger 403, no token 401, an unknown trade 404.
      const maker = await call(service, 'GET', `/v1/trades/${tradeId}/deposit-request`, undefined, makerToken);
      expect(maker.status).toBe(403);
      expect(maker.body).toMatchObject({ statusCode: 403, error: 'Forbidden', code: 'NOT_TRADE_PARTY' });
      const stranger = (await loginEvm(service, newEvmAccount())).body.tokens.access as string;
      expect((await call(service, 'GET', `/v1/trades/${tradeId}/deposit-request`, undefined, stranger)).status).toBe(403);
      expect((await call(service, 'GET', `/v1/trades/${tradeId}/deposit-request`)).status).toBe(401);
      expect((await call(service, 'GET', '/v1/trades/00000000-0000-4000-8000-000000000000/deposit-request', undefined, bridgerToken)).body)
        .toMatchObject({ statusCode: 404, code: 'TRADE_NOT_FOUND' });

      // The request read again is the one the OrderPortal takes.
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', again.reqContractDetails, { orderParams: again.reqContractDetails.orderParams });
      expect((await post(`/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
      const spent = await call(service, 'GET', `/v1/trades/${tradeId}/deposit-request`, undefined, bridgerToken);
      expect(spent.status).toBe(409);
      expect(spent.body).toEqual({
        statusCode: 409, error: 'Conflict', code: 'TRADE_ALREADY_DEPOSITED', retryable: false,
        message: `trade ${tradeId} is already deposited (status DEPOSITED): its deposit request was used; follow the trade instead`,
      });
    });

    it('finds the Bridger\'s trade by a deposit nobody confirmed yet, for the Bridger only, and records nothing', async () => {
      const created = await post('/v1/trades/create', createBody('70'), bridgerToken, 'recover-unconfirmed');
      const { tradeId, reqContractDetails: order } = created.body;
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      // Nobody confirmed it: the public list knows no such transaction.
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}`)).body.data).toEqual([]);
      // The Bridger, signed in, finds its trade by it (any spelling), still PENDING and with no transaction recorded.
      for (const spelling of [depositTx, depositTx.slice(2).toUpperCase()]) {
        const found = await service.request(`/v1/trades/all?txHash=${spelling}`, { headers: { authorization: `Bearer ${bridgerToken}` } });
        expect(found.status, spelling).toBe(200);
        expect(found.headers.get('cache-control'), spelling).toMatch(/private/);
        const { data } = await found.json();
        expect(data.map((t: any) => t.id), spelling).toEqual([tradeId]);
        expect(data[0], spelling).toMatchObject({ status: 'PENDING', orderHash: order.orderHash, transactions: [] });
      }
      // Filters still combine; the Maker (not this deposit's Bridger) finds nothing by it.
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}&orderHash=0x${'ab'.repeat(32)}`, undefined, bridgerToken)).body.data).toEqual([]);
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}&status=PENDING`, undefined, bridgerToken)).body.data.map((t: any) => t.id)).toEqual([tradeId]);
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}`, undefined, makerToken)).body.data).toEqual([]);
      // Another transaction of the chain (the ad's create went to another contract) finds nothing, nor does a hash the chain does not know.
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${adCreateTx}`, undefined, bridgerToken)).body.data).toEqual([]);
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${'ef'.repeat(32)}`, undefined, bridgerToken)).body.data).toEqual([]);
      // A bad token is refused as anywhere else.
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}`, undefined, 'not-a-token')).status).toBe(401);
      // Finding it recorded nothing: the trade is still PENDING until the deposit is confirmed, then found publicly.
      expect((await scene.trade(tradeId)).status).toBe('PENDING');
      expect((await post(`/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
      expect((await call(service, 'GET', `/v1/trades/all?txHash=${depositTx}`)).body.data.map((t: any) => t.id)).toEqual([tradeId]);
    });

    it('lists the Bridger\'s trades awaiting their deposit by status', async () => {
      const { tradeId } = (await post('/v1/trades/create', createBody('80'), bridgerToken, 'recover-by-status')).body;
      const listed = async (status: string) => {
        const answer = await call(service, 'GET', `/v1/trades/all?bridgerAddress=${bridger.address}&status=${status}&limit=100`);
        expect(answer.status, status).toBe(200);
        for (const trade of answer.body.data) expect(status.split(',')).toContain(trade.status);
        return answer.body.data.map((t: any) => t.id) as string[];
      };
      expect(await listed('PENDING')).toContain(tradeId);
      expect(await listed('PENDING,EXPIRED')).toContain(tradeId);
      expect(await listed('DEPOSITED,LOCKED')).not.toContain(tradeId);
    });

    it('refuses a malformed hash filter with 422 naming it', async () => {
      for (const [filter, value] of [['orderHash', 'abc'], ['orderHash', 'ab'.repeat(32)], ['txHash', '0x123'], ['txHash', 'zz'.repeat(32)]] as const) {
        const answer = await call(service, 'GET', `/v1/trades/all?${filter}=${value}`);
        expect(answer.status, `${filter}=${value}`).toBe(422);
        expect(JSON.stringify(answer.body.message)).toMatch(new RegExp(`${filter} must be ${filter === 'orderHash' ? 'an order hash' : 'a transaction hash'}`));
      }
    });
  });
});
