import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHorizonDouble, type HorizonDouble } from '../../test/support/fake-horizon.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { call, coSign, newStellarKeypair } from '../../test/support/wallets.ts';

let horizon: HorizonDouble;
let service: TestService;

beforeAll(async () => {
  horizon = await startHorizonDouble();
  service = await startTestService({ STELLAR_HORIZON_URL: horizon.url });
});
afterAll(async () => {
  await service?.close();
  await horizon?.close();
});
beforeEach(() => {
  horizon.accounts.clear();
  horizon.failWith = undefined;
});

/** Asks a challenge for `account` and logs in with it signed by `signers`. */
async function login(account: Keypair, ...signers: Keypair[]) {
  const challenge = await call(service, 'POST', '/v1/auth/challenge', { address: account.publicKey(), chainKind: 'STELLAR' });
  expect(challenge.status).toBe(200);
  const transaction = coSign(challenge.body.transaction, challenge.body.networkPassphrase, ...signers);
  return call(service, 'POST', '/v1/auth/login', { chainKind: 'STELLAR', transaction });
}

describe('SEP-10 sign-in with a Horizon (STELLAR_HORIZON_URL)', () => {
  it('refuses a multisig account whose signatures fall short of its medium threshold', async () => {
    const master = newStellarKeypair();
    const cosigner = newStellarKeypair();
    horizon.accounts.set(master.publicKey(), {
      signers: [{ key: cosigner.publicKey(), weight: 1 }, { key: master.publicKey(), weight: 1 }],
      thresholds: { low: 1, medium: 2, high: 2 },
    });
    const response = await login(master, master);
    expect(response.status).toBe(401);
    expect(response.body.message).toMatch(/medium threshold \(2\)/);
    expect(horizon.requests).toContain(master.publicKey());
  });

  it('accepts a multisig account whose signatures meet its medium threshold', async () => {
    const master = newStellarKeypair();
    const cosigner = newStellarKeypair();
    horizon.accounts.set(master.publicKey(), {
      signers: [{ key: cosigner.publicKey(), weight: 1 }, { key: master.publicKey(), weight: 1 }],
      thresholds: { low: 1, medium: 2, high: 2 },
    });
    const response = await login(master, master, cosigner);
    expect(response.status).toBe(200);
    expect(response.body.user.wallets).toEqual([expect.objectContaining({ chainKind: 'STELLAR', address: master.publicKey() })]);
  });

  it("accepts an account's other signer alone when its weight meets the threshold", async () => {
    const master = newStellarKeypair();
    const delegate = newStellarKeypair();
    horizon.accounts.set(master.publicKey(), {
      signers: [{ key: delegate.publicKey(), weight: 5 }, { key: master.publicKey(), weight: 1 }],
      thresholds: { low: 0, medium: 5, high: 5 },
    });
    expect((await login(master, delegate)).status).toBe(200);
  });

  it('refuses a master key the account has disabled (weight 0)', async () => {
    const master = newStellarKeypair();
    const cosigner = newStellarKeypair();
    horizon.accounts.set(master.publicKey(), {
      signers: [{ key: cosigner.publicKey(), weight: 1 }, { key: master.publicKey(), weight: 0 }],
      thresholds: { low: 0, medium: 0, high: 0 },
    });
    expect((await login(master, master)).status).toBe(401);
    expect((await login(master, cosigner)).status).toBe(200);
  });

  it('accepts an account Horizon does not know (404) signed with its master key, and only with it', async () => {
    const master = newStellarKeypair();
    expect((await login(master, master)).status).toBe(200);
    expect(horizon.requests).toContain(master.publicKey());
    expect((await login(master, newStellarKeypair())).status).toBe(401);
  });

  it('answers 503 and signs nobody in when Horizon fails', async () => {
    const master = newStellarKeypair();
    horizon.failWith = 500;
    const response = await login(master, master);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ statusCode: 503, message: expect.stringMatching(/Horizon answered 500/), error: 'Service Unavailable', code: 'HORIZON_UNAVAILABLE', retryable: true });
  });
});
