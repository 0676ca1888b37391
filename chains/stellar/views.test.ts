import { randomUUID } from 'node:crypto';
import { Address, Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fund, readContract } from '../../devnet/stellar/client.ts';
import { createAdOnManager, depositOnPortal, startSorobanTestNetwork, type PortalDeposit, type SorobanTestNetwork } from '../../test/support/soroban-network.ts';
import { RpcUnavailableError } from '../errors.ts';
import { createStellarClient } from './verify.ts';
import { readStellarDepositFunding, readStellarPortalOrderState, stellarAdState, stellarOrderState } from './views.ts';

/**
 * The Soroban contracts' views as the audit and the reservation reads see them, on the local Soroban
 * network (the real host running the AdManager's and OrderPortal's wasm): states numbered as on
 * EVM, an unknown ad or order read as absent, a SEP-41 balance with no allowance.
 */

const bridger = Keypair.random();
const maker = Keypair.random();
let net: SorobanTestNetwork;
let deposit: PortalDeposit;
let adId: string;
const client = () => createStellarClient(net.node.rpcUrl);

beforeAll(async () => {
  net = await startSorobanTestNetwork();
  await Promise.all([fund(net.server, bridger.publicKey()), fund(net.server, maker.publicKey())]);
  deposit = await depositOnPortal(net, bridger);
  adId = (await createAdOnManager(net, maker)).adId;
}, 120_000);

afterAll(async () => {
  await net?.stop();
});

describe('Soroban contract views', () => {
  it('reads an order\'s state on the OrderPortal as on EVM: 1 Deposited after its deposit, 0 for an order never made', async () => {
    expect(await stellarOrderState(client(), net.deployment.orderPortal, deposit.orderHash)).toBe(1);
    expect(await readStellarPortalOrderState(client(), net.deployment.orderPortal, deposit.orderHash)).toBe('Deposited');
    expect(await stellarOrderState(client(), net.deployment.orderPortal, `0x${'5a'.repeat(32)}`)).toBe(0);
    expect(await stellarOrderState(client(), net.deployment.adManager, deposit.orderHash)).toBe(0);
  });

  it('reads an ad as the AdManager stores it, and an ad id never created as absent', async () => {
    // createAdOnManager funds it with 1,000,000 stroops.
    expect(await stellarAdState(client(), net.deployment.adManager, adId)).toEqual({ exists: true, available: 1_000_000n, locked: 0n, closed: false });
    expect(await stellarAdState(client(), net.deployment.adManager, randomUUID())).toEqual({ exists: false, available: 0n, locked: 0n, closed: false });
  });

  it('reads a SEP-41 balance (the XLM Stellar Asset Contract) with no allowance: the portal pulls by the Bridger\'s authorisation', async () => {
    const balance = await readContract(net.server, net.passphrase, bridger.publicKey(), net.deployment.xlm, 'balance', [new Address(bridger.publicKey()).toScVal()]);
    expect(await readStellarDepositFunding(client(), net.deployment.xlm, bridger.publicKey())).toEqual({ balance, allowance: null });
    expect(await readStellarDepositFunding(client(), net.deployment.testToken, Keypair.random().publicKey())).toEqual({ balance: 0n, allowance: null });
  });

  it('cannot tell when the contract cannot answer (a contract without the view): RpcUnavailableError, never a guess', async () => {
    await expect(stellarOrderState(client(), net.deployment.xlm, deposit.orderHash)).rejects.toThrow(RpcUnavailableError);
  });
});
