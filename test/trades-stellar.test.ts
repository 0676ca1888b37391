import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestService, type TestService } from './support/service.ts';
import { evmAdStellarOrderTrade, prepareStellarTrades, stellarAdEvmOrderTrade, type StellarTradeWorld } from './support/stellar-trades.ts';

/**
 * Whole trades with a Stellar side through HTTP with the embedded orchestrator, on the devnet
 * `npm start` runs (anvil 31337 and 31338, the local Soroban network as chain 148 with the
 * contracts' wasm): an EVM ad chain with a Stellar order chain (the deposit in XLM), and a Stellar
 * ad chain with an EVM order chain; the proof verified by the Soroban host's pairing check.
 */

let service: TestService;
let world: StellarTradeWorld;

beforeAll(async () => {
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0', METRICS_PORT: '0' });
  const devnet = service.devnet!;
  world = await prepareStellarTrades({ api: service, knex: service.knex, evm: devnet, stellar: devnet.stellar! });
}, 5 * 60_000);

afterAll(async () => {
  world?.chain.close();
  await service?.close();
});

describe('a whole trade with a Stellar side (embedded orchestrator)', () => {
  it('settles with an EVM ad chain and a Stellar order chain: XLM deposited on Soroban, WXLM to the Bridger, XLM to the Maker', async () => {
    await evmAdStellarOrderTrade(world, 10_000_000n);
  });

  it('settles with a Stellar ad chain and an EVM order chain: the Maker\'s XLM ad pays the Bridger on Soroban, WXLM to the Maker', async () => {
    await stellarAdEvmOrderTrade(world, 10_000_000n);
  });
});
