import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../api/middleware/errors.ts';
import { cachedChainClients } from '../chains/verify.ts';
import { ChainJoin } from './chain-join.ts';

/**
 * A chain joining a serving `npm start` (the local Stellar network while it builds): what a client
 * sees of a request that needs it, through the API's own error handler. The route stands for any
 * use case reaching the chain through the process's client factory (verifying a deposit, reading an
 * ad's state); the factory is the real one, gated as the embedded run gates it.
 */
describe('a request that needs a devnet chain still joining', () => {
  const heldUrl = 'http://127.0.0.1:8000';
  const join = new ChainJoin('148', 'Stellar Devnet', 'building', 'cargo builds the network');
  join.hold(heldUrl);
  const clients = join.gate(cachedChainClients());
  let base: string;
  let server: ReturnType<ReturnType<typeof express>['listen']>;

  beforeAll(async () => {
    const app = express();
    app.get('/needs-stellar', (req, res) => {
      clients.stellar(String(req.query.url));
      res.json({ reached: true });
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
      statusCode: 503, error: 'Service Unavailable', code: 'CHAIN_UNAVAILABLE',
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
    expect(await (await ask('http://127.0.0.1:41234')).json()).toEqual({ reached: true });
    const stale = await ask(heldUrl);
    expect(stale.status).toBe(503);
    expect(stale.headers.get('retry-after')).toBe('2');
    expect((await stale.json()).code).toBe('CHAIN_UNAVAILABLE');
  });

  it('leaves every other chain alone meanwhile', async () => {
    const other = new ChainJoin('148', 'Stellar Devnet', 'building');
    other.hold(heldUrl);
    const gated = other.gate(cachedChainClients());
    expect(() => gated.stellar('http://127.0.0.1:8001')).not.toThrow();
    expect(() => gated.evm('http://127.0.0.1:8545')).not.toThrow();
    expect(() => gated.stellar(heldUrl)).toThrow(/not available yet/);
  });
});
