import { spawn, type ChildProcess } from 'node:child_process';
import { Keypair } from '@stellar/stellar-sdk';
import { JsonRpcProvider, Wallet } from 'ethers';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvSigner } from '../../chains/signers.ts';
import { childEnv } from '../../config/child-env.ts';
import { enqueueKeeperSend, keeperSendByKey, type KeeperSendInput } from '../../db/repositories/keeper-outbox.ts';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { eventually } from '../../test/support/devnet-client.ts';
import { startRpcFaultProxy } from '../../test/support/rpc-fault-proxy.ts';
import { keeperMetrics } from '../metrics.ts';
import { startKeeperRunner } from '../runner.ts';
import { createEvmKeeperSender, type EvmSenderDeps } from './sender.ts';
import { createKeeperEvmRpc } from './rpc.ts';

const CHAIN_ID = 31337;

describe('the keeper sends EVM transactions exactly once (real anvil, real PostgreSQL)', () => {
  let anvil: AnvilInstance;
  let db: TestDatabase;
  let chain: JsonRpcProvider;
  let tradeNumber = 0;

  beforeAll(async () => {
    [anvil, db] = await Promise.all([startAnvil({ chainId: CHAIN_ID }), createTestDatabase()]);
    chain = new JsonRpcProvider(anvil.rpcUrl, CHAIN_ID, { staticNetwork: true });
  }, 120_000);
  afterAll(async () => {
    chain?.destroy();
    await Promise.all([anvil?.stop(), db?.drop()]);
  });

  /** A keeper account of its own, funded, so each test counts only its own transactions. */
  async function keeperAccount() {
    const wallet = new Wallet(Wallet.createRandom().privateKey);
    await chain.send('anvil_setBalance', [wallet.address, '0x56BC75E2D63100000']);
    return { wallet, signer: createEnvSigner(wallet.signingKey, Keypair.random()) };
  }

  function sender(keeper: Awaited<ReturnType<typeof keeperAccount>>, overrides: Partial<EvmSenderDeps> = {}) {
    return createEvmKeeperSender({
      knex: db.knex,
      rpc: createKeeperEvmRpc([anvil.rpcUrl]),
      signer: keeper.signer,
      chain: { chainId: String(CHAIN_ID), confirmations: 3 },
      settings: { replaceAfterSeconds: 3_600, maxFeeGwei: 500, leaseSeconds: 30 },
      owner: `test-${tradeNumber}`,
      ...overrides,
    });
  }

  /** A send owed by a new trade: a call with data to a fresh address (what it calls does not matter to the outbox). */
  function owed(keeper: { wallet: Wallet }): KeeperSendInput {
    tradeNumber += 1;
    return {
      chainId: String(CHAIN_ID), account: keeper.wallet.address.toLowerCase(), tradeId: `00000000-0000-4000-8000-${String(tradeNumber).padStart(12, '0')}`,
      action: 'unlock', side: 'order', to: Wallet.createRandom().address, data: '0x1234abcd', value: 1n,
    };
  }

  const mine = (blocks: number) => chain.send('anvil_mine', [`0x${blocks.toString(16)}`]);
  const sentFrom = (keeper: { wallet: Wallet }) => chain.getTransactionCount(keeper.wallet.address, 'latest');

  it('a queued send lands exactly once, final at the chain\'s depth; queuing it again or passing again sends nothing', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    expect((await enqueueKeeperSend(db.knex, input)).created).toBe(true);
    expect((await enqueueKeeperSend(db.knex, { ...input, data: '0xdeadbeef' })).created).toBe(false);
    const registry = new Registry();
    const keeperSender = sender(keeper, { metrics: keeperMetrics(registry) });
    await keeperSender.pass();
    const sent = (await keeperSendByKey(db.knex, input))!;
    expect(sent.send.status).toBe('sent');
    // Mined (anvil automines) but one block deep of the three the chain asks for: not final yet.
    expect((await keeperSender.pass()).open).toBe(1);
    expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
    await mine(2);
    await keeperSender.pass();
    const done = (await keeperSendByKey(db.knex, input))!;
    expect(done.send.status).toBe('confirmed');
    expect(done.attempts).toHaveLength(1);
    const tx = (await chain.getTransaction(done.send.txHash!))!;
    expect({ to: tx.to, data: tx.data, value: tx.value, from: tx.from }).toEqual({ to: input.to, data: '0x1234abcd', value: 1n, from: keeper.wallet.address });
    expect(tx.type).toBe(2);
    await keeperSender.pass();
    expect(await sentFrom(keeper)).toBe(1);
    const scraped = await registry.metrics();
    expect(scraped).toContain('relayer_keeper_sends_total{chain="31337",action="unlock",result="confirmed"} 1');
    expect(scraped).toContain('relayer_keeper_pending_transactions{chain="31337"} 0');
    expect(scraped).toMatch(/relayer_keeper_balance\{chain="31337"\} 99\.99/);
  });

  it('a call that would revert is refused before it takes a nonce, and the next send is not held up', async () => {
    const keeper = await keeperAccount();
    // A contract whose every call reverts: runtime 0x60006000fd (REVERT(0, 0)).
    const deployer = new Wallet(Wallet.createRandom().privateKey, chain);
    await chain.send('anvil_setBalance', [deployer.address, '0x56BC75E2D63100000']);
    const deployed = await (await deployer.sendTransaction({ data: '0x6460006000fd6000526005601bf3' as string })).wait();
    const reverting = { ...owed(keeper), to: deployed!.contractAddress! };
    await enqueueKeeperSend(db.knex, { ...reverting, value: 0n });
    const fine = owed(keeper);
    await enqueueKeeperSend(db.knex, fine);
    const keeperSender = sender(keeper, { chain: { chainId: String(CHAIN_ID), confirmations: 1 } });
    await eventually('the good send confirmed', () => keeperSender.pass().then(() => keeperSendByKey(db.knex, fine)), (s) => s?.send.status === 'confirmed');
    const refused = (await keeperSendByKey(db.knex, reverting))!;
    expect(refused.send).toMatchObject({ status: 'failed', nonce: null });
    expect(refused.attempts).toHaveLength(0);
    expect((await keeperSendByKey(db.knex, fine))!.send.nonce).toBe(0n);
  });

  it('the base fee x10 while a transaction is pending: it is replaced with a higher fee, same nonce, and exactly one lands', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    await enqueueKeeperSend(db.knex, input);
    await chain.send('evm_setAutomine', [false]);
    try {
      let now = Date.now();
      const registry = new Registry();
      const keeperSender = sender(keeper, { settings: { replaceAfterSeconds: 60, maxFeeGwei: 500, leaseSeconds: 30 }, now: () => now, metrics: keeperMetrics(registry) });
      await keeperSender.pass();
      const first = (await keeperSendByKey(db.knex, input))!.attempts[0]!;
      const base = (await chain.getBlock('latest'))!.baseFeePerGas!;
      await chain.send('anvil_setNextBlockBaseFeePerGas', [`0x${(base * 10n).toString(16)}`]);
      await mine(1);
      // The block's base fee is above what the transaction offers: it stays pending.
      expect(await chain.getTransactionReceipt(first.txHash)).toBeNull();
      await keeperSender.pass();
      expect((await keeperSendByKey(db.knex, input))!.attempts).toHaveLength(1);
      now += 61_000;
      await keeperSender.pass();
      const replaced = (await keeperSendByKey(db.knex, input))!;
      expect(replaced.attempts).toHaveLength(2);
      const second = replaced.attempts[1]!;
      expect(second.maxFeePerGas).toBeGreaterThan(base * 10n);
      await mine(3);
      await keeperSender.pass();
      const done = (await keeperSendByKey(db.knex, input))!;
      expect(done.send).toMatchObject({ status: 'confirmed', txHash: second.txHash });
      expect(await chain.getTransactionReceipt(first.txHash)).toBeNull();
      expect(await sentFrom(keeper)).toBe(1);
      expect(await registry.metrics()).toContain('relayer_keeper_sends_total{chain="31337",action="unlock",result="replaced"} 1');
    } finally {
      await chain.send('evm_setAutomine', [true]);
    }
  });

  it('the RPC down while sending (the broadcast arrived, its answer lost) and then back: exactly one lands', async () => {
    const keeper = await keeperAccount();
    const proxy = await startRpcFaultProxy(anvil.rpcUrl, { mode: 'lie' });
    try {
      proxy.lies.eth_sendRawTransaction = () => {
        // The node took the transaction; the keeper hears nothing, and the provider stays down.
        proxy.mode = 'down';
        throw new Error('answer lost');
      };
      const input = owed(keeper);
      await enqueueKeeperSend(db.knex, input);
      const keeperSender = sender(keeper, { rpc: createKeeperEvmRpc([proxy.url], { timeoutMs: 2_000 }) });
      await keeperSender.pass();
      expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
      for (let i = 0; i < 3; i += 1) expect((await keeperSender.pass()).open).toBe(1);
      await mine(3);
      proxy.mode = 'honest';
      await eventually('the send confirmed once the RPC is back', () => keeperSender.pass().then(() => keeperSendByKey(db.knex, input)), (s) => s?.send.status === 'confirmed');
      expect((await keeperSendByKey(db.knex, input))!.attempts).toHaveLength(1);
      expect(await sentFrom(keeper)).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it('a sender killed right after its broadcast reached the node: the next sender takes over at the lease\'s end and nothing is sent twice', async () => {
    const keeper = await keeperAccount();
    const proxy = await startRpcFaultProxy(anvil.rpcUrl, { mode: 'lie' });
    let child: ChildProcess | undefined;
    try {
      const input = owed(keeper);
      await enqueueKeeperSend(db.knex, input);
      const killed = new Promise<void>((resolve) => {
        proxy.lies.eth_sendRawTransaction = (result) => {
          child!.kill('SIGKILL');
          resolve();
          return result;
        };
      });
      child = spawn(process.execPath, ['--import', 'tsx', 'test/support/keeper-sender-child.ts'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: childEnv({
          KEEPER_CHILD_DATABASE_URL: db.url, KEEPER_CHILD_RPC_URL: proxy.url, KEEPER_CHILD_EVM_KEY: keeper.wallet.privateKey,
          KEEPER_CHILD_CHAIN_ID: String(CHAIN_ID), KEEPER_CHILD_LEASE_SECONDS: '5',
        }),
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await Promise.race([killed, new Promise((_, reject) => child!.once('exit', () => setTimeout(() => reject(new Error(`the child sender exited before sending:\n${output}`)), 500)))]);
      await new Promise((resolve) => (child!.exitCode !== null || child!.signalCode !== null ? resolve(undefined) : child!.once('exit', resolve)));
      proxy.mode = 'honest';
      expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
      const successor = sender(keeper, { chain: { chainId: String(CHAIN_ID), confirmations: 1 }, owner: 'successor' });
      // The dead sender's lease runs out first: until then the successor does nothing.
      expect((await successor.pass()).leading).toBe(false);
      await eventually('the successor confirmed the send', () => successor.pass().then(() => keeperSendByKey(db.knex, input)), (s) => s?.send.status === 'confirmed', 30_000);
      const done = (await keeperSendByKey(db.knex, input))!;
      expect(done.attempts).toHaveLength(1);
      expect(done.send.txHash).toBe(done.attempts[0]!.txHash);
      expect(await sentFrom(keeper)).toBe(1);
    } finally {
      child?.kill('SIGKILL');
      await proxy.close();
    }
  });

  it('a transaction reorganised away after it was seen mined is sent again and lands once', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    await enqueueKeeperSend(db.knex, input);
    const keeperSender = sender(keeper);
    const snapshot = await chain.send('evm_snapshot', []);
    await keeperSender.pass();
    await keeperSender.pass();
    const seen = (await keeperSendByKey(db.knex, input))!;
    expect(seen.send.blockNumber).not.toBeNull();
    await chain.send('evm_revert', [snapshot]);
    await mine(1);
    expect(await chain.getTransactionReceipt(seen.attempts[0]!.txHash)).toBeNull();
    await keeperSender.pass();
    await mine(3);
    await eventually('the send confirmed again', () => keeperSender.pass().then(() => keeperSendByKey(db.knex, input)), (s) => s?.send.status === 'confirmed');
    expect(await sentFrom(keeper)).toBe(1);
    expect((await keeperSendByKey(db.knex, input))!.attempts).toHaveLength(1);
  });
  it('the runner sends for each registered EVM chain, leaves a chain it cannot send on alone (Stellar without a network passphrase), and gives its leases up on stop', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    await enqueueKeeperSend(db.knex, input);
    const stellarSend = { ...owed(keeper), chainId: '148' };
    await enqueueKeeperSend(db.knex, stellarSend);
    const runner = startKeeperRunner({
      knex: db.knex, signer: keeper.signer,
      chains: async () => [
        { kind: 'EVM', chainId: String(CHAIN_ID), rpcUrl: anvil.rpcUrl, rpcUrls: null, confirmations: 1 },
        { kind: 'STELLAR', chainId: '148', rpcUrl: 'http://127.0.0.1:9/never-called', rpcUrls: null, confirmations: 1 },
      ],
      settings: { replaceAfterSeconds: 3_600, maxFeeGwei: 500, stellarMaxFeeStroops: 10_000_000, leaseSeconds: 30, pollSeconds: 3_600 },
    });
    try {
      await eventually('the EVM send confirmed', () => runner.passAll().then(() => keeperSendByKey(db.knex, input)), (s) => s?.send.status === 'confirmed');
      expect((await keeperSendByKey(db.knex, stellarSend))!.send.status).toBe('queued');
    } finally {
      await runner.stop();
    }
    const lease = await db.knex('keeper_accounts').where({ chain_id: String(CHAIN_ID), account: keeper.wallet.address.toLowerCase() }).first();
    expect(lease.lease_owner).toBeNull();
  });
  it('a transaction at KEEPER_MAX_FEE_GWEI is not replaced again: counted once as capped, and it lands once the base fee falls', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    await enqueueKeeperSend(db.knex, input);
    await chain.send('evm_setAutomine', [false]);
    try {
      let now = Date.now();
      const registry = new Registry();
      const keeperSender = sender(keeper, { settings: { replaceAfterSeconds: 60, maxFeeGwei: 1, leaseSeconds: 30 }, now: () => now, metrics: keeperMetrics(registry) });
      await keeperSender.pass();
      const first = (await keeperSendByKey(db.knex, input))!.attempts[0]!;
      expect(first.maxFeePerGas).toBeLessThanOrEqual(1_000_000_000n);
      await chain.send('anvil_setNextBlockBaseFeePerGas', ['0x2540be400']);
      await mine(1);
      now += 61_000;
      await keeperSender.pass();
      now += 61_000;
      await keeperSender.pass();
      expect((await keeperSendByKey(db.knex, input))!.attempts).toHaveLength(1);
      expect(await registry.metrics()).toContain('relayer_keeper_sends_total{chain="31337",action="unlock",result="capped"} 1');
      await chain.send('anvil_setNextBlockBaseFeePerGas', ['0x1']);
      await eventually('the capped transaction confirmed once the base fee fell', async () => {
        await mine(1);
        await keeperSender.pass();
        return (await keeperSendByKey(db.knex, input))!;
      }, (s) => s.send.status === 'confirmed', 20_000);
      expect((await keeperSendByKey(db.knex, input))!.send).toMatchObject({ status: 'confirmed', txHash: first.txHash });
      expect(await sentFrom(keeper)).toBe(1);
    } finally {
      await chain.send('evm_setAutomine', [true]);
    }
  });
  it('a provider that has not indexed the receipt yet while the account\'s count moved is waited out: the send is confirmed, not failed', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    await enqueueKeeperSend(db.knex, input);
    // A provider behind another: the first receipt asked for each transaction is not found yet (the count already shows it mined).
    const real = createKeeperEvmRpc([anvil.rpcUrl]);
    const asked = new Set<string>();
    const lagging = { ...real, receipt: async (hash: string) => (asked.has(hash) ? real.receipt(hash) : (asked.add(hash), null)) };
    const keeperSender = sender(keeper, { rpc: lagging });
    await keeperSender.pass();
    await keeperSender.pass();
    expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
    await mine(3);
    await keeperSender.pass();
    expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('confirmed');
    expect(await sentFrom(keeper)).toBe(1);
  });

  it('a nonce used by a transaction the keeper never signed fails the send once the chain is past its depth, and not before', async () => {
    const keeper = await keeperAccount();
    const input = owed(keeper);
    await enqueueKeeperSend(db.knex, input);
    // Signed and recorded, its broadcast lost; then the same account spends the nonce elsewhere.
    const real = createKeeperEvmRpc([anvil.rpcUrl]);
    await sender(keeper, { rpc: { ...real, sendRaw: async () => { throw new Error('connection reset'); } } }).pass().catch(() => undefined);
    expect((await keeperSendByKey(db.knex, input))!.send).toMatchObject({ status: 'sent', nonce: 0n });
    await (await keeper.wallet.connect(chain).sendTransaction({ to: Wallet.createRandom().address, value: 1n, nonce: 0 })).wait();
    const keeperSender = sender(keeper);
    await keeperSender.pass();
    expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
    await mine(4);
    await keeperSender.pass();
    expect((await keeperSendByKey(db.knex, input))!.send).toMatchObject({ status: 'failed' });
  });
});
