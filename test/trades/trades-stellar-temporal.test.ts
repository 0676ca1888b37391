import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { evmAdStellarOrderTrade, stellarAdEvmOrderTrade, type StellarTradeWorld } from '../support/stellar-trades.ts';
import { startStellarTemporalStack, type StellarTemporalStack } from '../support/stellar-temporal-stack.ts';
import { eventually } from '../support/devnet-client.ts';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';

/**
 * The whole trades with a Stellar side of test/trades/trades-stellar.test.ts, with the Temporal
 * orchestrator: a real `temporal server start-dev`, the API in this process (TEMPORAL_ADDRESS set),
 * one `npm run worker` and one `npm run prover` as OS processes over the same database; the devnet
 * with the local Soroban network (chain 148) beside the two anvil chains.
 */

let stack: StellarTemporalStack;
let world: StellarTradeWorld;
let temporalAddress: string;

beforeAll(async () => {
  stack = await startStellarTemporalStack(inject('temporalCli'));
  ({ world, temporalAddress } = stack);
}, 5 * 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** The trade's workflow as Temporal indexes it: it ran there, to the end. */
async function workflowStatus(tradeId: string): Promise<string | undefined> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const described = await new Client({ connection }).workflow.getHandle(tradeWorkflowId(tradeId)).describe();
    return described.searchAttributes.TradeStatus?.[0] as string | undefined;
  } finally {
    await connection.close();
  }
}

describe('a whole trade with a Stellar side (Temporal orchestrator, separate worker and prover processes)', () => {
  it('settles with an EVM ad chain and a Stellar order chain (XLM deposited on Soroban)', async () => {
    const { tradeId } = await evmAdStellarOrderTrade(world, 10_000_000n);
    expect(await eventually('indexed SETTLED', () => workflowStatus(tradeId), (status) => status === 'SETTLED', 15_000)).toBe('SETTLED');
  });

  it('settles with a Stellar ad chain and an EVM order chain (the unlock paying the Bridger on Soroban)', async () => {
    const { tradeId } = await stellarAdEvmOrderTrade(world, 10_000_000n);
    expect(await eventually('indexed SETTLED', () => workflowStatus(tradeId), (status) => status === 'SETTLED', 15_000)).toBe('SETTLED');
  });
});
