import { Keypair, Networks, Transaction, WebAuth } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.ts';
import {
  call, coSign, evmProof, loginEvm, loginStellar, newEvmAccount, newStellarKeypair, signPersonal, stellarProof, type EvmAccount,
} from '../../test/support/wallets.ts';

const SERVER = Keypair.random();
const PASSPHRASE = Networks.TESTNET;
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ SEP10_SIGNING_SECRET: SERVER.secret(), SEP10_HOME_DOMAIN: 'relayer.test', SEP10_WEB_AUTH_DOMAIN: 'auth.relayer.test' });
});
afterAll(async () => { await service?.close(); });

const challenge = (body: unknown) => call(service, 'POST', '/v1/auth/challenge', body);
const login = (body: unknown) => call(service, 'POST', '/v1/auth/login', body);

function expect401(response: { status: number; body: any }, message: RegExp) {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ statusCode: 401, message: expect.stringMatching(message), error: 'Unauthorized', code: expect.stringMatching(/^(UNAUTHENTICATED|SIGN_IN_REJECTED|TOKEN_EXPIRED)$/), retryable: false });
}

function expect422(response: { status: number; body: any }, ...messages: RegExp[]) {
  expect(response.status).toBe(422);
  expect(response.body.error).toBe('Unprocessable Entity');
  for (const message of messages) expect(response.body.message).toContainEqual(expect.stringMatching(message));
}

async function evmMessage(account: EvmAccount): Promise<string> {
  return (await challenge({ address: account.address, chainKind: 'EVM' })).body.message;
}

/** Logs in with `edit(message)` signed by the account: the signature is valid, the text is not the issued one. */
async function loginWithEdited(account: EvmAccount, edit: (message: string) => string) {
  const message = edit(await evmMessage(account));
  return login({ chainKind: 'EVM', message, signature: signPersonal(account, message) });
}

describe('POST /v1/auth/challenge', () => {
  it('gives an EVM wallet the complete SIWE message with a checksummed address, whatever case was sent', async () => {
    const account = newEvmAccount();
    const before = Date.now();
    const response = await challenge({ address: account.address.toLowerCase(), chainKind: 'EVM' });
    expect(response.status).toBe(200);
    const body = response.body;
    expect(Object.keys(body).sort()).toEqual(['address', 'chainKind', 'domain', 'expiresAt', 'message', 'nonce', 'uri']);
    // Outside production with SIWE_* unset, the message names the port the API bound (PORT 0 here) and the devnet.
    const host = `localhost:${service.port}`;
    expect(body).toMatchObject({ chainKind: 'EVM', address: account.address, domain: host, uri: `http://${host}` });
    const lines = body.message.split('\n');
    expect(lines.slice(0, 6)).toEqual([
      `${host} wants you to sign in with your Ethereum account:`, account.address, '',
      'Sign in to the Cross-Chain Liquidity Relayer.', '', `URI: http://${host}`,
    ]);
    expect(lines).toContain('Version: 1');
    expect(lines).toContain('Chain ID: 31337');
    expect(lines).toContain(`Nonce: ${body.nonce}`);
    expect(lines.find((l: string) => l.startsWith('Issued At: '))).toBeDefined();
    expect(lines).toContain(`Expiration Time: ${body.expiresAt}`);
    // Five minutes by default.
    const ttl = Date.parse(body.expiresAt) - before;
    expect(ttl).toBeGreaterThan(295_000);
    expect(ttl).toBeLessThanOrEqual(301_000);
  });

  it('gives a Stellar wallet a SEP-10 transaction signed by the configured server key, home and web auth domain', async () => {
    const client = newStellarKeypair();
    const response = await challenge({ address: client.publicKey(), chainKind: 'STELLAR' });
    expect(response.status).toBe(200);
    const body = response.body;
    expect(Object.keys(body).sort()).toEqual(['address', 'chainKind', 'expiresAt', 'networkPassphrase', 'transaction']);
    expect(body).toMatchObject({ chainKind: 'STELLAR', address: client.publicKey(), networkPassphrase: PASSPHRASE });
    const read = WebAuth.readChallengeTx(body.transaction, SERVER.publicKey(), PASSPHRASE, 'relayer.test', 'auth.relayer.test');
    expect(read.clientAccountID).toBe(client.publicKey());
    expect(new Date(Number(read.tx.timeBounds!.maxTime) * 1000).toISOString()).toBe(body.expiresAt);
  });

  it('answers 422 naming the field for missing fields, malformed addresses and an unknown chainKind', async () => {
    expect422(await challenge({}), /^address is required$/, /^chainKind is required$/);
    expect422(await challenge({ address: '0x1234', chainKind: 'EVM' }), /^address must be an EVM address.*received '0x1234'/);
    // EIP-55 vector 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed with every letter's case flipped: a wrong checksum.
    const bad = '0x5AaEB6053f3e94c9B9a09F33669435e7eF1bEaED';
    expect422(await challenge({ address: bad, chainKind: 'EVM' }), /^address must be an EVM address/);
    expect422(await challenge({ address: 'GABC', chainKind: 'STELLAR' }), /^address must be a Stellar account G-address, received 'GABC'/);
    expect422(await challenge({ address: newEvmAccount().address, chainKind: 'STELLAR' }), /^address must be a Stellar account G-address/);
    expect422(await challenge({ address: newStellarKeypair().publicKey(), chainKind: 'EVM' }), /^address must be an EVM address/);
    expect422(await challenge({ address: newEvmAccount().address, chainKind: 'SOLANA' }), /^chainKind must be EVM or STELLAR$/);
    expect422(await challenge({ address: newEvmAccount().address, chainKind: 'EVM', extra: 1 }), /unknown field extra/);
  });
});

describe('EVM login (SIWE)', () => {
  it("creates the wallet's user on first login and signs the same user in afterwards", async () => {
    const account = newEvmAccount();
    const first = await loginEvm(service, account);
    expect(first.status).toBe(200);
    expect(first.body.user).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      wallets: [{ address: account.address, chainKind: 'EVM', createdAt: expect.any(String) }],
      createdAt: expect.any(String),
    });
    expect(first.body.tokens).toEqual({ access: expect.any(String), refresh: expect.any(String) });
    const second = await loginEvm(service, account);
    expect(second.body.user.id).toBe(first.body.user.id);
  });

  it('logs in with the checksummed message of a challenge asked with a lowercase address', async () => {
    const account = newEvmAccount();
    const { message } = (await challenge({ address: account.address.toLowerCase(), chainKind: 'EVM' })).body;
    const response = await login({ chainKind: 'EVM', message, signature: signPersonal(account, message) });
    expect(response.status).toBe(200);
    expect(response.body.user.wallets[0].address).toBe(account.address);
  });

  it('creates one user when a new wallet logs in twice at once', async () => {
    const account = newEvmAccount();
    const proofs = await Promise.all([evmProof(service, account), evmProof(service, account), evmProof(service, account)]);
    const responses = await Promise.all(proofs.map((proof) => login(proof)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(responses.map((r) => r.body.user.id)).size).toBe(1);
    expect(await service.knex('wallets').where({ address: account.address }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('rejects a used challenge', async () => {
    const proof = await evmProof(service, newEvmAccount());
    expect((await login(proof)).status).toBe(200);
    expect401(await login(proof), /already used/);
  });

  it('lets only one of two concurrent logins with one challenge through', async () => {
    const proof = await evmProof(service, newEvmAccount());
    const statuses = (await Promise.all([login(proof), login(proof), login(proof)])).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 401, 401]);
  });

  it('rejects an unknown nonce', async () => {
    expect401(await loginWithEdited(newEvmAccount(), (m) => m.replace(/Nonce: \w+/, 'Nonce: 0123456789abcdef0123456789abcdef')), /unknown challenge/);
  });

  it('names SIWE_DOMAIN, SIWE_URI and SIWE_CHAIN_ID when they are set, whatever the port', async () => {
    const configured = await startTestService({ SIWE_DOMAIN: 'app.example.com', SIWE_URI: 'https://app.example.com/in', SIWE_CHAIN_ID: '8453' });
    try {
      const account = newEvmAccount();
      const response = await call(configured, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
      expect(response.body).toMatchObject({ domain: 'app.example.com', uri: 'https://app.example.com/in' });
      expect(response.body.message.split('\n')).toEqual(expect.arrayContaining(['app.example.com wants you to sign in with your Ethereum account:', 'URI: https://app.example.com/in', 'Chain ID: 8453']));
      expect((await loginEvm(configured, account)).status).toBe(200);
    } finally {
      await configured.close();
    }
  });

  it('rejects an expired challenge', async () => {
    const account = newEvmAccount();
    const proof = await evmProof(service, account);
    await service.knex('auth_challenges').where({ address: account.address }).update({ expires_at: service.knex.raw("now() - interval '1 second'") });
    expect401(await login(proof), /challenge expired/);
  });

  it('checks domain, URI, chain id, issued-at, expiration and not-before, each', async () => {
    const account = newEvmAccount();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const past = new Date(Date.now() - 1_000).toISOString();
    const host = `localhost:${service.port}`;
    expect401(await loginWithEdited(account, (m) => m.replace(`${host} `, 'evil.example ')), new RegExp(`domain must be '${host}', received 'evil.example'`));
    expect401(await loginWithEdited(account, (m) => m.replace(`URI: http://${host}`, 'URI: http://evil.example')), /URI must be/);
    expect401(await loginWithEdited(account, (m) => m.replace('Chain ID: 31337', 'Chain ID: 5')), /Chain ID must be 31337, received 5/);
    expect401(await loginWithEdited(account, (m) => m.replace(/Issued At: \S+/, `Issued At: ${future}`)), /Issued At .* is in the future/);
    expect401(await loginWithEdited(account, (m) => m.replace(/Expiration Time: \S+/, `Expiration Time: ${past}`)), /message expired/);
    expect401(await loginWithEdited(account, (m) => `${m}\nNot Before: ${future}`), /not valid before/);
    // The challenges were not spent by those attempts: the untouched message still logs in.
    expect((await loginEvm(service, account)).status).toBe(200);
  });

  it('accepts only the exact message issued for the nonce', async () => {
    const account = newEvmAccount();
    expect401(await loginWithEdited(account, (m) => m.replace('Sign in to the Cross-Chain Liquidity Relayer.', 'Sign in.')), /not exactly the one issued/);
    // A message naming another address with someone else's nonce.
    const victim = newEvmAccount();
    const victimMessage = await evmMessage(victim);
    const forged = victimMessage.replace(victim.address, account.address);
    expect401(await login({ chainKind: 'EVM', message: forged, signature: signPersonal(account, forged) }), /issued to another address/);
  });

  it("requires the signature to recover to the message's address, and never answers 500 for a bad one", async () => {
    const account = newEvmAccount();
    const message = await evmMessage(account);
    expect401(await login({ chainKind: 'EVM', message, signature: signPersonal(newEvmAccount(), message) }), /not made by the address/);
    expect401(await login({ chainKind: 'EVM', message, signature: '0x1234' }), /does not verify/);
    expect401(await login({ chainKind: 'EVM', message, signature: `0x${'00'.repeat(65)}` }), /does not verify|not made by/);
    // Signature over a different text.
    expect401(await login({ chainKind: 'EVM', message, signature: signPersonal(account, `${message} `) }), /not made by the address/);
  });

  it('answers 422 naming the field for an incomplete or malformed EVM login', async () => {
    expect422(await login({}), /^chainKind is required$/);
    expect422(await login({ chainKind: 'BTC', message: 'x', signature: '0x00' }), /^chainKind must be EVM or STELLAR$/);
    expect422(await login({ chainKind: 'EVM' }), /^message is required$/, /^signature is required$/);
    expect422(await login({ chainKind: 'EVM', message: 'hello' }), /^signature is required$/);
    expect422(await login({ chainKind: 'EVM', message: 'hello', signature: '0x00' }), /^message is not an EIP-4361 \(SIWE\) message/);
    expect422(await login({ chainKind: 'EVM', message: await evmMessage(newEvmAccount()), signature: 'zz' }), /^signature must be a 0x-prefixed hex signature$/);
  });

  it("answers 422 when the body's chainKind is not the challenge's", async () => {
    const evm = await evmProof(service, newEvmAccount());
    expect422(await login({ ...evm, chainKind: 'STELLAR' }), /^chainKind is STELLAR but message, signature belong to a EVM login/, /^transaction is required$/);
    const stellar = await stellarProof(service, newStellarKeypair());
    expect422(await login({ ...stellar, chainKind: 'EVM' }), /^chainKind is EVM but transaction belongs to a STELLAR login/);
    // A SIWE message carrying the nonce of a Stellar challenge.
    const stellarNonce = new Transaction(stellar.transaction, PASSPHRASE).hash().toString('hex');
    const account = newEvmAccount();
    const message = (await evmMessage(account)).replace(/Nonce: \w+/, `Nonce: ${stellarNonce}`);
    expect422(await login({ chainKind: 'EVM', message, signature: signPersonal(account, message) }), /^chainKind must match the challenge's chain kind STELLAR/);
  });
});

describe('Stellar login (SEP-10)', () => {
  it("creates the wallet's user on first login and signs the same user in afterwards", async () => {
    const client = newStellarKeypair();
    const first = await loginStellar(service, client);
    expect(first.status).toBe(200);
    expect(first.body.user.wallets).toEqual([{ address: client.publicKey(), chainKind: 'STELLAR', createdAt: expect.any(String) }]);
    expect((await loginStellar(service, client)).body.user.id).toBe(first.body.user.id);
  });

  it("requires the client account's signature, and no other", async () => {
    const client = newStellarKeypair();
    const { transaction } = (await challenge({ address: client.publicKey(), chainKind: 'STELLAR' })).body;
    expect401(await login({ chainKind: 'STELLAR', transaction }), /not signed by the client account/);
    expect401(await login({ chainKind: 'STELLAR', transaction: coSign(transaction, PASSPHRASE, newStellarKeypair()) }), /not signed by the client account/);
    expect401(await login({ chainKind: 'STELLAR', transaction: coSign(transaction, PASSPHRASE, client, newStellarKeypair()) }), /unrecognized signatures/);
    expect((await login({ chainKind: 'STELLAR', transaction: coSign(transaction, PASSPHRASE, client) })).status).toBe(200);
  });

  it('logs each challenge transaction in once', async () => {
    const proof = await stellarProof(service, newStellarKeypair());
    expect((await login(proof)).status).toBe(200);
    expect401(await login(proof), /already used/);
  });

  it('rejects an expired challenge', async () => {
    const client = newStellarKeypair();
    const proof = await stellarProof(service, client);
    await service.knex('auth_challenges').where({ address: client.publicKey() }).update({ expires_at: service.knex.raw("now() - interval '1 second'") });
    expect401(await login(proof), /challenge expired/);
  });

  it('checks server key, home domain, web auth domain and network passphrase from config', async () => {
    const client = newStellarKeypair();
    const forge = (server: Keypair, home: string, webAuth: string, passphrase: string) =>
      login({ chainKind: 'STELLAR', transaction: coSign(WebAuth.buildChallengeTx(server, client.publicKey(), home, 300, passphrase, webAuth), passphrase, client) });
    expect401(await forge(newStellarKeypair(), 'relayer.test', 'auth.relayer.test', PASSPHRASE), /not a valid challenge of this service/);
    expect401(await forge(SERVER, 'evil.example', 'auth.relayer.test', PASSPHRASE), /home domain/);
    expect401(await forge(SERVER, 'relayer.test', 'evil.example', PASSPHRASE), /web_auth_domain/);
    expect401(await forge(SERVER, 'relayer.test', 'auth.relayer.test', Networks.PUBLIC), /not signed by server/);
    // Well-formed and signed by the server key, but never issued.
    expect401(await forge(SERVER, 'relayer.test', 'auth.relayer.test', PASSPHRASE), /unknown challenge/);
  });

  it('answers 422 naming the field for a missing or non-XDR transaction', async () => {
    expect422(await login({ chainKind: 'STELLAR' }), /^transaction is required$/);
    expect422(await login({ chainKind: 'STELLAR', transaction: 'not base64!' }), /^transaction must be base64 XDR$/);
    expect422(await login({ chainKind: 'STELLAR', transaction: 'AAAAAAAA' }), /^transaction is not a Stellar transaction envelope/);
    expect422(await login({ chainKind: 'STELLAR', transaction: 42 }), /^transaction must be a base64 XDR string$/);
  });
});

describe('malformed sign-in requests', () => {
  it('never answer 5xx, whatever the body', async () => {
    const account = newEvmAccount();
    const message = await evmMessage(account);
    const stellar = await stellarProof(service, newStellarKeypair());
    const values: unknown[] = [
      null, true, 0, -1, 1e308, '', ' ', 'x'.repeat(5000), '0x', '0x00', `0x${'ff'.repeat(65)}`, `0x${'00'.repeat(64)}1b`,
      'AAAA', '====', 'AAAAAgAAAAA=', stellar.transaction.slice(0, 40), `${stellar.transaction}AAAA`, stellar.transaction.replace(/A/g, 'B'),
      message.replace('Version: 1', 'Version: 2'), message.replace(/Nonce: \w+/, 'Nonce: x'), message.replace(/Issued At: \S+/, 'Issued At: yesterday'),
      `${message}\nRequest ID: 1`, `${message}\nResources:\n- https://a.example`, message.replace(account.address, account.address.toLowerCase()),
      [], {}, ['EVM'], { $gt: '' },
    ];
    let seed = 7;
    const pick = <T>(items: T[]): T => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return items[seed % items.length]!; };
    const kinds: unknown[] = ['EVM', 'STELLAR', 'evm', undefined, 1, null];
    const bodies: unknown[] = [null, [], 'text', 42];
    for (let i = 0; i < 150; i += 1) {
      const body: Record<string, unknown> = {};
      for (const field of ['chainKind', 'message', 'signature', 'transaction', 'address', 'refresh']) {
        const roll = pick([0, 1, 2]);
        if (roll === 0) continue;
        body[field] = field === 'chainKind' ? pick(kinds) : pick(values);
      }
      bodies.push(body);
    }
    for (const body of bodies) {
      for (const path of ['/v1/auth/challenge', '/v1/auth/login', '/v1/auth/refresh']) {
        const response = await call(service, 'POST', path, body);
        expect(response.status, `${path} ${JSON.stringify(body).slice(0, 300)}`).toBeLessThan(500);
        expect(response.body.statusCode ?? 200).toBe(response.status);
      }
    }
  });
});
