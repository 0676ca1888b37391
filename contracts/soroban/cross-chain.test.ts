import { readFileSync } from 'node:fs';
import { Keypair } from '@stellar/stellar-sdk';
import { Contract, Interface, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmContractCall, type CallExtras } from '../../chains/evm/call-args.ts';
import { ORDER_FIELDS, type OrderParams } from '../../chains/order.ts';
import type { ActionFields, ActionName } from '../../chains/request-schema.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners } from '../../chains/signers.ts';
import { loadDevnetArtifacts } from '../evm/artifacts.ts';
import { anvilAccounts, startDevnet, type Devnet } from '../../devnet/index.ts';
import { LEDGER_TIMESTAMP, VECTORS_JSON, type Vectors } from './vectors.ts';

/**
 * The EVM half of the two cross-chain trades whose Stellar half cargo test runs in the Soroban
 * host (contracts/soroban/tests): the same orders, the same order hashes and the same Groth16 proof
 * bytes settle on the reference Solidity contracts on anvil.
 *   - ad chain Stellar, order chain EVM devnet A: the Bridger's deposits on A reach the root the
 *     Soroban AdManager's unlock was signed and proved against, and the Maker's unlock on A's
 *     OrderPortal takes the very proof the Soroban AdManager took;
 *   - order chain Stellar, ad chain EVM devnet B: the Maker's ad and lock on B, then the unlock on
 *     B's AdManager with the proof made against the Soroban OrderPortal's root.
 * Requests are signed afresh for each EVM contract (EIP-712) over the same fields. Both anvil
 * clocks start at the Soroban ledger's time, so the orders' lockExpiry/refundTime pass the same
 * time checks on both sides.
 */
const vectors = JSON.parse(readFileSync(VECTORS_JSON, 'utf8')) as Vectors;
const domain = vectors.network.domain;
const signers = createRelayerSigners(
  { relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: Keypair.random().secret() },
  domain,
);
const [, maker, bridger] = anvilAccounts(3);
const A = '31337';
const B = '31338';

let devnet: Devnet;
let abi: Record<'adManager' | 'orderPortal' | 'token', InterfaceAbi>;
let errors: Interface;
const providers: JsonRpcProvider[] = [];
const clocks: Record<string, JsonRpcProvider> = {};

function contract(chainId: string, name: 'adManager' | 'orderPortal' | 'testErc20', account: { privateKey: string }): Contract {
  const provider = new JsonRpcProvider(devnet.rpcUrls[chainId], undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
  providers.push(provider);
  return new Contract(devnet.deployments[chainId]![name], abi[name === 'testErc20' ? 'token' : name], new Wallet(account.privateKey, provider));
}

async function submit<T extends ActionName>(
  chainId: string,
  target: 'adManager' | 'orderPortal',
  account: { privateKey: string },
  action: T,
  fields: ActionFields<T>,
  extras: CallExtras = {},
): Promise<void> {
  const data = await buildSignedCallData({
    target: { kind: 'EVM', chainId, contractAddress: devnet.deployments[chainId]![target] },
    action,
    fields,
    signers,
    ttlSeconds: 600,
    now: (await chainSeconds(chainId)) * 1000,
  });
  const call = evmContractCall(action, data, extras);
  try {
    await (await contract(chainId, target, account).getFunction(call.functionName)(...call.args, { value: call.value })).wait();
  } catch (error) {
    const revert = (error as { data?: string }).data;
    const name = revert ? errors.parseError(revert)?.name : undefined;
    throw name ? new Error(`reverted: ${name}`) : error;
  }
}

async function approve(chainId: string, account: { privateKey: string }, spender: 'adManager' | 'orderPortal', amount: bigint) {
  await (await contract(chainId, 'testErc20', account).getFunction('approve')(devnet.deployments[chainId]![spender], amount)).wait();
}

/** The chain's clock: the latest block's timestamp (unix seconds). */
async function chainSeconds(chainId: string): Promise<number> {
  const block = await clocks[chainId]!.getBlock('latest');
  return block!.timestamp;
}

const balance = (chainId: string, who: string) =>
  contract(chainId, 'testErc20', maker!).getFunction('balanceOf')(who) as Promise<bigint>;

beforeAll(async () => {
  devnet = await startDevnet({ ports: [0, 0], relayerEvmAddress: signers.evmAddress, domain });
  for (const chainId of [A, B]) {
    const provider = new JsonRpcProvider(devnet.rpcUrls[chainId], undefined, { staticNetwork: true, cacheTimeout: -1 });
    providers.push(provider);
    clocks[chainId] = provider;
    await provider.send('evm_setNextBlockTimestamp', [LEDGER_TIMESTAMP]);
    await provider.send('evm_mine', []);
  }
  const compiled = await loadDevnetArtifacts();
  abi = {
    adManager: compiled.adManager.abi as InterfaceAbi,
    orderPortal: compiled.orderPortal.abi as InterfaceAbi,
    token: compiled.testErc20.abi as InterfaceAbi,
  };
  errors = new Interface(
    [...(compiled.adManager.abi as never[]), ...(compiled.orderPortal.abi as never[])].filter((e: { type?: string }) => e.type === 'error'),
  );
});

afterAll(async () => {
  for (const provider of providers) provider.destroy();
  await devnet?.stop();
});

/** The Order struct argument from a vector's words, in ORDER_FIELDS' order (bytes32 as hex, uint256 as bigint). */
const struct = (words: Record<string, string>) => ORDER_FIELDS.map(({ name, kind }) => (kind === 'uint' ? BigInt(words[name]!) : words[name]!));

describe('one order hash on every implementation', () => {
  it('Solidity\'s orderHashOf equals chains/order.ts\'s hash of every vector order (which the Soroban contracts recompute in cargo test), orderAmount and adAmount both bound', async () => {
    const orders = [
      vectors.adManager.order, vectors.adManager.secondOrder, vectors.adManager.edge.order,
      ...vectors.adManager.orderChainDeposits.map((d) => d.order),
      ...vectors.orderPortal.deposits.map((d) => d.order), vectors.orderPortal.edge.order,
    ];
    const portal = contract(A, 'orderPortal', maker!);
    const manager = contract(B, 'adManager', maker!);
    for (const order of orders) {
      // Each vector moves a different number on each chain (6- vs 7-decimal TUSD): the hash binds both.
      expect(order.params.orderAmount).not.toBe(order.params.adAmount);
      expect(await portal.getFunction('orderHashOf')(struct(order.words))).toBe(order.hash);
      expect(await manager.getFunction('orderHashOf')(struct(order.words))).toBe(order.hash);
      const swapped = { ...order.words, orderAmount: order.words.adAmount!, adAmount: order.words.orderAmount! };
      expect(await portal.getFunction('orderHashOf')(struct(swapped))).not.toBe(order.hash);
    }
  });
});

describe('one proof settles both chains of a Stellar/EVM trade', () => {
  it('the vectors name the devnet contracts the orders were hashed for', () => {
    for (const chainId of [A, B]) {
      expect(devnet.deployments[chainId]!.orderPortal).toBe(vectors.adManager.order.params.orderPortal);
      expect(devnet.deployments[chainId]!.adManager).toBe(vectors.orderPortal.deposits[0]!.order.params.adManager);
      expect(devnet.deployments[chainId]!.testErc20).toBe(vectors.adManager.order.params.orderChainToken);
    }
  });

  it('ad chain Stellar, order chain EVM: the portal on A reaches the proof root and pays the Maker with the Soroban AdManager\'s proof', async () => {
    const trade = vectors.adManager;
    await approve(A, bridger!, 'orderPortal', 10n ** 12n);
    const portal = contract(A, 'orderPortal', bridger!);
    for (const deposit of trade.orderChainDeposits) {
      await submit(A, 'orderPortal', bridger!, 'createOrder', { orderHash: deposit.order.hash, secretCommitment: deposit.secretCommitment }, { orderParams: deposit.order.params });
      expect(await portal.getFunction('currentRoot')()).toBe(BigInt(deposit.root));
    }
    expect(await portal.getFunction('currentRoot')()).toBe(BigInt(trade.targetRoot));

    const order: OrderParams = trade.order.params;
    const before = await balance(A, order.orderRecipient);
    const fields = { orderHash: trade.order.hash, nullifierHash: trade.nullifierHash, targetRoot: trade.targetRoot };
    await submit(A, 'orderPortal', maker!, 'unlock', fields, { orderParams: order, proof: trade.proof!.proof });
    expect((await balance(A, order.orderRecipient)) - before).toBe(BigInt(order.orderAmount));
  });

  it('order chain Stellar, ad chain EVM: the AdManager on B locks and releases to the Bridger with the proof against the Soroban portal\'s root', async () => {
    const trade = vectors.orderPortal;
    const ours = trade.deposits[trade.ours]!;
    const order: OrderParams = ours.order.params;
    await approve(B, maker!, 'adManager', 10n ** 12n);
    await submit(B, 'adManager', maker!, 'createAd', {
      adId: order.adId, adCreator: maker!.address, adToken: order.adChainToken, initialAmount: 10n ** 9n, orderChainId: order.orderChainId, adRecipient: order.orderRecipient,
    });
    await submit(B, 'adManager', maker!, 'lockForOrder', { orderHash: ours.order.hash }, { orderParams: order });

    const before = await balance(B, order.adRecipient);
    const fields = { orderHash: ours.order.hash, nullifierHash: ours.nullifierHash, targetRoot: trade.targetRoot };
    await submit(B, 'adManager', bridger!, 'unlock', fields, { orderParams: order, proof: trade.proof!.proof });
    expect((await balance(B, order.adRecipient)) - before).toBe(BigInt(order.adAmount));
  });
});
