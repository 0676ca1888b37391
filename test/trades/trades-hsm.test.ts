import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { evmAdStellarOrderTrade, prepareStellarTrades, stellarAdEvmOrderTrade, type StellarTradeWorld } from '../support/stellar-trades.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { createSoftHsmToken, type SoftHsmToken } from '../support/softhsm.ts';

/**
 * Whole trades with the relayer's keys in an HSM (RELAYER_SIGNER=pkcs11): a SoftHSM2 token with the
 * two keys generated inside it, and no relayer key anywhere else. The service (embedded
 * orchestrator) starts the devnet with the contracts trusting the token's addresses, and every
 * request it signs, on anvil and on the Soroban network, is signed through the token.
 */

let token: SoftHsmToken;
let service: TestService;
let world: StellarTradeWorld;

beforeAll(async () => {
  token = createSoftHsmToken(inject('softhsmModule'));
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0', ...token.env });
  const devnet = service.devnet!;
  world = await prepareStellarTrades({ api: service, knex: service.knex, evm: devnet, stellar: devnet.stellar! });
}, 5 * 60_000);

afterAll(async () => {
  world?.chain.close();
  await service?.close();
  token?.remove();
});

describe('whole trades with the relayer keys in an HSM (SoftHSM2 over PKCS#11)', () => {
  it('signs with the token alone: no relayer key in the process, the devnet contracts trust the token\'s addresses', async () => {
    const { signer } = service.container.signers;
    expect(signer.backend).toBe('pkcs11');
    expect(await signer.evmAddress()).toBe(token.evmAddress);
    expect(await signer.stellarPublicKey()).toBe(token.stellarPublicKey);
    expect(service.container.secrets.relayerEvmPrivateKey).toBeUndefined();
    expect(service.container.secrets.relayerStellarSecret).toBeUndefined();
  });

  it('settles with an EVM ad chain and a Stellar order chain: createOrder signed for Soroban, lock and unlock for anvil, by the token', async () => {
    const run = await evmAdStellarOrderTrade(world, 10_000_000n);
    expect(run.tradeId).toBeTruthy();
  });

  it('settles with a Stellar ad chain and an EVM order chain: createAd, lock and unlock signed for Soroban, createOrder for anvil, by the token', async () => {
    const run = await stellarAdEvmOrderTrade(world, 10_000_000n);
    expect(run.tradeId).toBeTruthy();
  });
});
