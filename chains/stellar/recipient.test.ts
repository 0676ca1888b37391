import { Asset, Keypair, Operation } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fund, submitOperation } from '../../devnet/stellar/client.ts';
import { startSorobanTestNetwork, type SorobanTestNetwork } from '../../test/support/soroban-network.ts';
import { createStellarClient } from './verify.ts';
import { readStellarTokenKind, stellarRecipientProblem } from './recipient.ts';

/**
 * Who can be paid a token on the local Soroban network (the real ledger): native XLM only an
 * existing account, a classic asset's Stellar Asset Contract only an account with a trustline
 * (or its issuer), a token contract of its own anyone. Each refusal is what the ledger would
 * refuse when the AdManager pays the recipient at unlock.
 */

let net: SorobanTestNetwork;
const issuer = Keypair.random();
const holder = Keypair.random();
let usdc: Asset;
let usdcContract: string;
const client = () => createStellarClient(net.node.rpcUrl);

beforeAll(async () => {
  net = await startSorobanTestNetwork();
  await Promise.all([fund(net.server, issuer.publicKey()), fund(net.server, holder.publicKey())]);
  usdc = new Asset('USDC', issuer.publicKey());
  await submitOperation(net.server, net.passphrase, issuer, Operation.createStellarAssetContract({ asset: usdc }));
  usdcContract = usdc.contractId(net.passphrase);
}, 180_000);

afterAll(async () => {
  await net?.stop();
});

describe('the token kinds of Soroban contracts', () => {
  it('tells the XLM contract, a classic asset\'s contract and a token contract of its own apart', async () => {
    expect(await readStellarTokenKind(client(), net.deployment.xlm)).toEqual({ kind: 'native' });
    expect(await readStellarTokenKind(client(), usdcContract)).toEqual({ kind: 'classic', code: 'USDC', issuer: issuer.publicKey() });
    expect(await readStellarTokenKind(client(), net.deployment.testToken)).toEqual({ kind: 'contract' });
  });
});

describe('whether a recipient can be paid', () => {
  it('XLM: a fresh random G-address is no account and cannot be; once created it can', async () => {
    const fresh = Keypair.random().publicKey();
    expect(await stellarRecipientProblem(client(), net.deployment.xlm, fresh, 1n)).toMatch(new RegExp(`^${fresh} is no account on this network`));
    await fund(net.server, fresh);
    expect(await stellarRecipientProblem(client(), net.deployment.xlm, fresh, 1n)).toBeNull();
  });

  it('a classic asset: an account with no trustline (or no account at all) is refused; the issuer is always payable', async () => {
    // The devnet has no trustlines (devnet/stellar/README.md: classic ops are CreateAccount and native
    // Payment only), so an authorised one with room is not reached here; the reads are the same ledger keys.
    expect(await stellarRecipientProblem(client(), usdcContract, holder.publicKey(), 1n)).toMatch(new RegExp(`^${holder.publicKey()} has no trustline to USDC:${issuer.publicKey()}`));
    expect(await stellarRecipientProblem(client(), usdcContract, Keypair.random().publicKey(), 1n)).toMatch(/has no trustline/);
    expect(await stellarRecipientProblem(client(), usdcContract, issuer.publicKey(), 10n ** 18n)).toBeNull();
  });

  it('a contract recipient and a token contract of its own need neither account nor trustline', async () => {
    expect(await stellarRecipientProblem(client(), net.deployment.xlm, net.deployment.orderPortal, 1n)).toBeNull();
    expect(await stellarRecipientProblem(client(), usdcContract, net.deployment.orderPortal, 1n)).toBeNull();
    expect(await stellarRecipientProblem(client(), net.deployment.testToken, Keypair.random().publicKey(), 1n)).toBeNull();
  });
});
