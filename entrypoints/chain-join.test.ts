import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../api/middleware/errors.ts';
import type { ChainReads } from '../chains/adapter.ts';
import type { Chains } from '../chains/chains.ts';
import { ChainJoin } from './chain-join.ts';

/**
 * The process's chains behind the gate, as a double that answers every read with the address it
 * was asked at: the gate's concern is only what passes. (first-start.test.ts joins the real network.)
 */
const answeringChains: Chains = {
  of: (chain) => new Proxy({} as ChainReads, { get: () => async () => `reached ${chain.rpcUrl}` }),
  health: async (chain) => ({ chainId: chain.chainId, degraded: false, usable: 1, quorum: 1 }) as never,
};

/**
 * A chain joining a serving `npm start` (the local Stellar network while it builds): what a client
 * sees of a request that needs it, through the API's own error handler. The route stands for any
 * use case reading the chain through the process's chains (verifying a deposit, reading an ad's
 * state), gated as the embedded run gates them.
 */
describe('a request that needs a devnet chain still joining', () => {
  const heldUrl = 'http://127.0.0.1:8000';
  const join = new ChainJoin('148', 'Stellar Devnet', 'building', 'cargo builds the network');
  join.hold(heldUrl);
  const chains = join.gate(answeringChains);
  const stellar = (rpcUrl: string) => ({ kind: 'STELLAR' as const, chainId: '148', rpcUrl });
  let base: string;
  let server: ReturnType<ReturnType<typeof express>['listen']>;

  beforeAll(async () => {
    const app = express();
    app.get('/needs-stellar', async (req, res) => {
      res.json({ reached: await chains.of(stellar(String(req.query.url))).finalTime() });
    });
    app.use(errorHandler(pino({ level: 'silent' })));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const ask = (url: string) => fetch(`${base}/needs-stellar?url=${encodeURIComponent(url)}`);

  it('answers 503 CHAIN_UNAVAILABLE with a Retry-After fitting what the chain does, naming it, until it joined', async () => {
    const building = await ask(heldUrl);
    expect(building.status).toBe(503);
    expect(building.headers.get('retry-after')).toBe('30');
    expect(await building.json()).toEqual({
      statusCode: 503, error: 'Service Unavailable', code: 'CHAIN_UNAVAILABLE', retryable: true,
      message: 'chain 148 (Stellar Devnet) is not available yet: building, it joins when ready',
    });

    join.enter('starting', 'deploying');
    const starting = await ask(heldUrl);
    expect(starting.status).toBe(503);
    expect(starting.headers.get('retry-after')).toBe('5');
    expect(join.status()).toMatchObject({ chainId: '148', state: 'starting', detail: 'deploying' });
  });

  it('once joined, reaches it at its new address; the address the registry held before stays refused', async () => {
    join.joinedAt('http://127.0.0.1:41234', 'joined in 12 s');
    expect(join.status()).toMatchObject({ state: 'ready', detail: 'joined in 12 s' });
    expect(await (await ask('http://127.0.0.1:41234')).json()).toEqual({ reached: 'reached http://127.0.0.1:41234' });
    expect(await chains.health(stellar('http://127.0.0.1:41234'))).not.toBeNull();
    expect(await chains.health(stellar(heldUrl))).toBeNull();
    const stale = await ask(heldUrl);
    expect(stale.status).toBe(503);
    expect(stale.headers.get('retry-after')).toBe('2');
    expect((await stale.json()).code).toBe('CHAIN_UNAVAILABLE');
  });

  it('leaves every other chain alone meanwhile, and does not probe the joining one', async () => {
    const other = new ChainJoin('148', 'Stellar Devnet', 'building');
    other.hold(heldUrl);
    const gated = other.gate(answeringChains);
    expect(await gated.of({ kind: 'EVM', chainId: '31337', rpcUrl: 'http://127.0.0.1:8545' }).finalTime()).toBe('reached http://127.0.0.1:8545');
    expect(await gated.of({ kind: 'STELLAR', chainId: '149', rpcUrl: heldUrl }).finalTime()).toBe(`reached ${heldUrl}`);
    await expect(gated.of(stellar('http://127.0.0.1:8001')).finalTime()).rejects.toThrow(/not available yet/);
    expect(await gated.health(stellar(heldUrl))).toBeNull();
  });
});
