import { Keypair } from '@stellar/stellar-sdk';
import { readFileSync } from 'node:fs';
import { ApplicationConfiguration, Config, Sep10, SigningKeypair, StellarConfiguration, Wallet } from '@stellar/typescript-wallet-sdk';
import axios from 'axios';
import jwt from 'jsonwebtoken';
import { importRegistry } from '../../registry/import.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { call, coSign } from '../../test/support/wallets.ts';

/**
 * Stellar wallets sign in as they expect: SEP-1's stellar.toml and SEP-10's own endpoint shape
 * (GET ?account= -> {transaction, network_passphrase}; POST {transaction} -> {token}), driven by a
 * stock wallet SDK (@stellar/typescript-wallet-sdk's Sep10) that is given nothing but the host.
 */
describe('SEP-10 for stock Stellar wallets (development: domains follow the host)', () => {
  let service: TestService;
  let host: string;
  beforeAll(async () => {
    service = await startTestService();
    host = new URL(service.url).host;
  });
  afterAll(async () => { await service?.close(); });

  it('publishes stellar.toml with the signing key, the web-auth endpoint and the network', async () => {
    const res = await service.request('/.well-known/stellar.toml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const toml = await res.text();
    expect(toml).toContain(`WEB_AUTH_ENDPOINT="http://${host}/v1/auth/sep10"`);
    expect(toml).toContain('NETWORK_PASSPHRASE="Test SDF Network ; September 2015"'); // no Stellar chain in the registry
    expect(toml).toMatch(/^SIGNING_KEY="G[A-Z2-7]{55}"$/m);
  });

  it('signs in a stock wallet SDK unmodified, and its token is a session of this API', async () => {
    const account = Keypair.random();
    const anchor = Wallet.TestNet().anchor({ homeDomain: host, allowHttp: true });
    const sep10 = await anchor.sep10();
    const authToken = await sep10.authenticate({ accountKp: SigningKeypair.fromSecret(account.secret()) });
    const me = await call(service, 'GET', '/v1/auth/me', undefined, authToken.token);
    expect(me.status).toBe(200);
    expect(me.body.wallets).toEqual([expect.objectContaining({ chainKind: 'STELLAR', address: account.publicKey() })]);
    // SEP-10: `sub` is the account; the user id has a claim of its own.
    expect(authToken.account).toBe(account.publicKey());
    expect((jwt.decode(authToken.token) as { uid: string }).uid).toBe(me.body.id);
  });

  it('keeps the account as `sub` across a refresh', async () => {
    const account = Keypair.random();
    const challenge = await call(service, 'GET', `/v1/auth/sep10?account=${account.publicKey()}`);
    const signed = coSign(challenge.body.transaction, challenge.body.network_passphrase, account);
    const { refresh } = (await call(service, 'POST', '/v1/auth/sep10', { transaction: signed })).body;
    const renewed = await call(service, 'POST', '/v1/auth/refresh', { refresh });
    expect(renewed.status).toBe(200);
    const access = renewed.body.tokens?.access ?? renewed.body.token ?? renewed.body.access;
    expect((jwt.decode(access) as { sub: string }).sub).toBe(account.publicKey());
    expect((await call(service, 'GET', '/v1/auth/me', undefined, access)).status).toBe(200);
  });

  it('answers the standard shapes, takes the token request as a form too, and spends each challenge once', async () => {
    const account = Keypair.random();
    const challenge = await call(service, 'GET', `/v1/auth/sep10?account=${account.publicKey()}&home_domain=${host}`);
    expect(challenge.status).toBe(200);
    expect(Object.keys(challenge.body).sort()).toEqual(['network_passphrase', 'transaction']);
    const signed = coSign(challenge.body.transaction, challenge.body.network_passphrase, account);
    const form = await service.request('/v1/auth/sep10', {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ transaction: signed }).toString(),
    });
    expect(form.status).toBe(200);
    const { token, refresh } = await form.json();
    expect((await call(service, 'GET', '/v1/auth/me', undefined, token)).status).toBe(200);
    expect((await call(service, 'POST', '/v1/auth/refresh', { refresh })).status).toBe(200);
    expect((await call(service, 'POST', '/v1/auth/sep10', { transaction: signed })).status).toBe(401);
  });

  it('refuses another home domain, client domains, memos and non-accounts with 422 naming the field', async () => {
    const account = Keypair.random().publicKey();
    const cases: [string, RegExp][] = [
      [`account=${account}&home_domain=evil.example`, new RegExp(`^home_domain must be ${host.replace('.', '\\.')}`)],
      [`account=${account}&client_domain=wallet.example`, /^client_domain is not supported/],
      [`account=${account}&memo=7`, /^memo is not supported/],
      ['account=CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC', /^account must be a Stellar account G-address/],
      ['', /^account is required/],
    ];
    for (const [query, message] of cases) {
      const res = await call(service, 'GET', `/v1/auth/sep10?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.message, query).toEqual([expect.stringMatching(message)]);
    }
  });

  it('names the host a request reached in the challenge, so each host signs in for itself', async () => {
    const account = Keypair.random();
    const viaLocalhost = service.url.replace('127.0.0.1', 'localhost');
    const challenge = await (await fetch(`${viaLocalhost}/v1/auth/sep10?account=${account.publicKey()}`)).json();
    const tx = new (await import('@stellar/stellar-sdk')).Transaction(challenge.transaction, challenge.network_passphrase);
    const port = new URL(service.url).port;
    expect(tx.operations.map((op) => (op.type === 'manageData' ? [op.name, op.value?.toString()] : op.type))).toEqual([
      [`localhost:${port} auth`, expect.any(String)],
      ['web_auth_domain', 'localhost'],
    ]);
  });
});

describe('SEP-10 with fixed domains (as production sets them)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ SEP10_HOME_DOMAIN: 'relayer.example.org', SEP10_WEB_AUTH_DOMAIN: 'api.relayer.example.org' });
  });
  afterAll(async () => { await service?.close(); });

  it('names the configured domains whatever host the request used, and signs the account in', async () => {
    const account = Keypair.random();
    const challenge = await call(service, 'GET', `/v1/auth/sep10?account=${account.publicKey()}&home_domain=relayer.example.org`);
    const { Transaction } = await import('@stellar/stellar-sdk');
    const tx = new Transaction(challenge.body.transaction, challenge.body.network_passphrase);
    expect(tx.operations.map((op) => (op.type === 'manageData' ? op.name : op.type))).toEqual(['relayer.example.org auth', 'web_auth_domain']);
    const token = await call(service, 'POST', '/v1/auth/sep10', { transaction: coSign(challenge.body.transaction, challenge.body.network_passphrase, account) });
    expect(token.status).toBe(200);
    expect((await (await service.request('/.well-known/stellar.toml')).text())).toContain('WEB_AUTH_ENDPOINT="http://');
  });
});

describe('SEP-10 on the network the registry names (the devnet registry: the local network)', () => {
  const LOCAL = 'Standalone Network ; February 2017';
  let service: TestService;
  let host: string;
  beforeAll(async () => {
    service = await startTestService();
    host = new URL(service.url).host;
    await importRegistry(service.db.knex, JSON.parse(readFileSync('devnet/registry.json', 'utf8')));
  });
  afterAll(async () => { await service?.close(); });

  it('names the local network in stellar.toml and the challenge, and a wallet SDK on that network signs in', async () => {
    const toml = await (await service.request('/.well-known/stellar.toml')).text();
    expect(toml).toContain(`NETWORK_PASSPHRASE="${LOCAL}"`);
    // SEP-1 [[CURRENCIES]]: the registry's Stellar tokens, each named by its contract.
    expect(toml).toContain('[[CURRENCIES]]\ncode="TUSD"\ncontract="CD3XG34DX7S6KWMAJML5L4U6N4N5PSWXWTGIDXH6SUQZH44ZGR3XS4YX"\n');
    expect(toml).toContain('[[CURRENCIES]]\ncode="XLM"\ncontract="CDMLFMKMMD7MWZP3FKUBZPVHTUEDLSX4BYGYKH4GCESXYHS3IHQ4EIG4"\n');
    expect(toml).toMatch(/display_decimals=7/);
    const account = Keypair.random();
    // The SDK's Sep10 itself, configured for the local network (its `anchor()` allows http on the testnet only).
    const cfg = new Config({
      stellarConfiguration: new StellarConfiguration({ network: LOCAL as never, horizonUrl: 'https://horizon.invalid' }),
      applicationConfiguration: new ApplicationConfiguration(),
    });
    const sep10 = new Sep10({ cfg, webAuthEndpoint: `${service.url}/v1/auth/sep10`, homeDomain: host, httpClient: axios.create() as never });
    const authToken = await sep10.authenticate({ accountKp: SigningKeypair.fromSecret(account.secret()) });
    expect(authToken.account).toBe(account.publicKey());
    expect((await call(service, 'GET', '/v1/auth/me', undefined, authToken.token)).status).toBe(200);
  });
});
