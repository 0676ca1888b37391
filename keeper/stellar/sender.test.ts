import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Address, FeeBumpTransaction, Keypair, nativeToScVal, Operation, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import { SigningKey } from 'ethers';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderParams } from '../../chains/order.ts';
import { createEnvSigner } from '../../chains/signers.ts';
import { stellarTimeoutCall } from '../../chains/stellar/call-args.ts';
import { childEnv } from '../../config/child-env.ts';
import { enqueueKeeperSend, keeperSendByKey, type KeeperSendInput } from '../../db/repositories/keeper-outbox.ts';
import { fund } from '../../devnet/stellar/client.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { eventually } from '../../test/support/devnet-client.ts';
import { startRpcFaultProxy } from '../../test/support/rpc-fault-proxy.ts';
import { CHAIN_ID, depositWithOrder, startSorobanTestNetwork, type SorobanTestNetwork } from '../../test/support/soroban-network.ts';
import type { KeeperSender } from '../leased-pass.ts';
import { keeperMetrics } from '../metrics.ts';
import { startKeeperRunner } from '../runner.ts';
import { stellarKeeperCall } from './call.ts';
import { createKeeperStellarRpc } from './rpc.ts';
import { createStellarKeeperSender, type StellarSenderDeps } from './sender.ts';

const AMOUNT = 1_000_000n;
/** What a transfer send moves, in stroops (1 XLM), and what the friendbot gives a new account (10,000 XLM). */
const TRANSFER = 10_000_000n;
const FRIENDBOT = 100_000_000_000n;

describe('the keeper sends Stellar transactions exactly once (the local Soroban network, real PostgreSQL)', () => {
  let net: SorobanTestNetwork;
  let db: TestDatabase;
  const bridger = Keypair.random();
  let order: OrderParams;
  let tradeNumber = 0;

  beforeAll(async () => {
    [net, db] = await Promise.all([startSorobanTestNetwork(), createTestDatabase()]);
    await fund(net.server, bridger.publicKey());
    ({ orderParams: order } = await depositWithOrder(net, bridger, AMOUNT));
    // Past the deposit's refundTime: from here on anyone may refund it (the keeper's call).
    const { closeTime } = await net.node.closeLedger();
    await net.node.increaseTime(Number(order.refundTime) - closeTime + 1);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([net?.stop(), db?.drop()]);
  });

  const rpcOf = (url = net.node.rpcUrl) => createKeeperStellarRpc([url], { timeoutMs: 2_000 });

  /** A keeper account of its own, funded by the friendbot, so each test counts only its own transactions. */
  async function keeperAccount() {
    const keypair = Keypair.random();
    await fund(net.server, keypair.publicKey());
    const signer = createEnvSigner(new SigningKey(`0x${randomBytes(32).toString('hex')}`), keypair);
    return { keypair, signer, sequence: async () => (await rpcOf().account(keypair.publicKey()))!.sequence };
  }
  type Keeper = Awaited<ReturnType<typeof keeperAccount>>;

  function sender(keeper: Keeper, overrides: Partial<StellarSenderDeps> = {}) {
    return createStellarKeeperSender({
      knex: db.knex,
      rpc: rpcOf(),
      signer: keeper.signer,
      chain: { chainId: CHAIN_ID, confirmations: 1, networkPassphrase: net.passphrase },
      settings: { replaceAfterSeconds: 3_600, maxFeeStroops: 10_000_000, leaseSeconds: 30 },
      owner: `test-${tradeNumber}`,
      ...overrides,
    });
  }

  /** A send owed by a new trade, calling `call`. */
  function owed(keeper: Keeper, action: string, call: { to: string; data: string }): KeeperSendInput {
    tradeNumber += 1;
    return {
      chainId: CHAIN_ID, account: keeper.keypair.publicKey(), tradeId: `00000000-0000-4000-8000-${String(tradeNumber).padStart(12, '0')}`,
      action, side: 'order', ...call,
    };
  }

  /** The refund of `refunded` (past its refundTime) on the OrderPortal: it pays the Bridger back. */
  const owedRefund = (keeper: Keeper, refunded: OrderParams) =>
    owed(keeper, 'refund', stellarKeeperCall(stellarTimeoutCall('refund', refunded), net.deployment.orderPortal));

  /**
   * A lighter real invocation for the tests of faults: 1 XLM from the keeper to a new account of its own
   * through the native asset's contract (the keeper authorises it as the transaction's source), so
   * what landed is what the recipient received.
   */
  async function owedTransfer(keeper: Keeper) {
    const recipient = Keypair.random();
    await fund(net.server, recipient.publicKey());
    const transfer = Operation.invokeContractFunction({
      contract: net.deployment.xlm, function: 'transfer',
      args: [new Address(keeper.keypair.publicKey()).toScVal(), new Address(recipient.publicKey()).toScVal(), nativeToScVal(TRANSFER, { type: 'i128' })],
    });
    const received = async () => (await rpcOf().account(recipient.publicKey()))!.balance - FRIENDBOT;
    return { ...owed(keeper, 'unlock', stellarKeeperCall(transfer, net.deployment.xlm)), received };
  }

  const bridgerBalance = async () => (await rpcOf().account(bridger.publicKey()))!.balance;
  const landed = async (hash: string) => (await rpcOf().transaction(hash))?.success ?? false;
  /** Passes of `keeperSender` until the send of `key` has `status`. */
  const until = (keeperSender: KeeperSender, key: KeeperSendInput, status: string, what: string, ms?: number) =>
    eventually(what, () => keeperSender.pass().then(() => keeperSendByKey(db.knex, key)), (found) => found?.send.status === status, ms);

  it('a queued refund lands exactly once and pays the Bridger back; queuing it again or passing again sends nothing', async () => {
    const keeper = await keeperAccount();
    const before = { keeper: await keeper.sequence(), bridger: await bridgerBalance() };
    const input = owedRefund(keeper, order);
    expect((await enqueueKeeperSend(db.knex, input)).created).toBe(true);
    expect((await enqueueKeeperSend(db.knex, input)).created).toBe(false);
    // Given its call a moment ago, as the trades' preparation does.
    await db.knex('keeper_sends').where({ trade_id: input.tradeId }).update({ queued_at: db.knex.fn.now() });
    const registry = new Registry();
    const keeperSender = sender(keeper, { metrics: keeperMetrics(registry) });
    await keeperSender.pass();
    const sent = (await keeperSendByKey(db.knex, input))!;
    expect(sent.send).toMatchObject({ status: 'sent', nonce: before.keeper + 1n });
    expect(sent.attempts).toHaveLength(1);
    expect(sent.attempts[0]!.broadcastAt).not.toBeNull();
    await until(keeperSender, input, 'confirmed', 'the refund confirmed');
    const done = (await keeperSendByKey(db.knex, input))!;
    expect(done.send.txHash).toBe(sent.attempts[0]!.txHash);
    expect(done.send.blockNumber).toBe(BigInt((await rpcOf().transaction(done.send.txHash!))!.ledger));
    const envelope = TransactionBuilder.fromXDR(done.attempts[0]!.raw, net.passphrase) as Transaction;
    expect({ source: envelope.source, sequence: envelope.sequence }).toEqual({ source: keeper.keypair.publicKey(), sequence: String(before.keeper + 1n) });
    // The refund paid the Bridger (who sent nothing and so paid no fee) its deposit back.
    expect(await bridgerBalance()).toBe(before.bridger + AMOUNT);
    await keeperSender.pass();
    expect(await keeper.sequence()).toBe(before.keeper + 1n);
    const account = await db.knex('keeper_accounts').where({ chain_id: CHAIN_ID, account: keeper.keypair.publicKey() }).first();
    expect(BigInt(account.next_nonce)).toBe(before.keeper + 2n);
    const scraped = await registry.metrics();
    expect(scraped).toContain(`relayer_keeper_sends_total{chain="${CHAIN_ID}",action="refund",result="confirmed"} 1`);
    expect(scraped).toContain(`relayer_keeper_pending_transactions{chain="${CHAIN_ID}"} 0`);
    expect(scraped).toContain(`relayer_keeper_send_delay_seconds_count{chain="${CHAIN_ID}",action="refund"} 1`);
    // 10,000 XLM from the friendbot, less the fee, in whole lumens (7 decimals, not an EVM chain's 18).
    expect(scraped).toMatch(new RegExp(`relayer_keeper_balance\\{chain="${CHAIN_ID}"\\} 9999\\.\\d+`));
  });

  it('a call that would fail, or that needs another account\'s authorisation, is refused before it takes a sequence number, and the next send is not held up', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    // The refund of an order never deposited: the portal refuses it in simulation.
    const never = owedRefund(keeper, { ...order, salt: '123456789' });
    // A transfer out of the Bridger's lumens: it needs the Bridger's authorisation, which the keeper cannot give.
    tradeNumber += 1;
    const transfer = Operation.invokeContractFunction({
      contract: net.deployment.xlm, function: 'transfer',
      args: [new Address(bridger.publicKey()).toScVal(), new Address(keeper.keypair.publicKey()).toScVal(), nativeToScVal(1n, { type: 'i128' })],
    });
    const foreign = { ...never, tradeId: `00000000-0000-4000-8000-${String(tradeNumber).padStart(12, '0')}`, ...stellarKeeperCall(transfer, net.deployment.xlm) };
    const fine = await owedTransfer(keeper);
    await enqueueKeeperSend(db.knex, never);
    await enqueueKeeperSend(db.knex, foreign);
    await enqueueKeeperSend(db.knex, fine);
    const registry = new Registry();
    const keeperSender = sender(keeper, { metrics: keeperMetrics(registry) });
    await until(keeperSender, fine, 'confirmed', 'the good refund confirmed');
    for (const key of [never, foreign]) {
      const refused = (await keeperSendByKey(db.knex, key))!;
      expect(refused.send).toMatchObject({ status: 'failed', nonce: null });
      expect(refused.attempts).toHaveLength(0);
    }
    const why = await db.knex('keeper_sends').where({ trade_id: foreign.tradeId }).first('last_error');
    expect(why.last_error).toBe(`would fail: it needs the authorisation of ${bridger.publicKey()}`);
    expect((await keeperSendByKey(db.knex, fine))!.send.nonce).toBe(start + 1n);
    expect(await keeper.sequence()).toBe(start + 1n);
    expect(await registry.metrics()).toContain(`relayer_keeper_sends_total{chain="${CHAIN_ID}",action="refund",result="refused"} 2`);
    expect(await fine.received()).toBe(TRANSFER);
  });

  it('the RPC down while sending (the broadcast arrived, its answer lost) and then back: exactly one lands', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const proxy = await startRpcFaultProxy(net.node.rpcUrl, { mode: 'lie' });
    try {
      proxy.lies.sendTransaction = () => {
        // The node took the transaction; the keeper hears nothing, and the provider stays down.
        proxy.mode = 'down';
        throw new Error('answer lost');
      };
      const input = await owedTransfer(keeper);
      await enqueueKeeperSend(db.knex, input);
      const keeperSender = sender(keeper, { rpc: rpcOf(proxy.url) });
      await keeperSender.pass();
      expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
      for (let i = 0; i < 3; i += 1) expect((await keeperSender.pass()).open).toBe(1);
      // Meanwhile the node closed the ledger with it.
      await eventually('the lost broadcast in a ledger', async () => landed((await keeperSendByKey(db.knex, input))!.attempts[0]!.txHash), (yes) => yes);
      proxy.mode = 'honest';
      await until(keeperSender, input, 'confirmed', 'the send confirmed once the RPC is back');
      expect((await keeperSendByKey(db.knex, input))!.attempts).toHaveLength(1);
      expect(await keeper.sequence()).toBe(start + 1n);
      expect(await input.received()).toBe(TRANSFER);
    } finally {
      await proxy.close();
    }
  });

  it('a sender killed right after its broadcast reached the node: the next sender takes over at the lease\'s end and nothing is sent twice', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const proxy = await startRpcFaultProxy(net.node.rpcUrl, { mode: 'lie' });
    let child: ChildProcess | undefined;
    try {
      const input = await owedTransfer(keeper);
      await enqueueKeeperSend(db.knex, input);
      const killed = new Promise<void>((resolve) => {
        proxy.lies.sendTransaction = (result) => {
          child!.kill('SIGKILL');
          resolve();
          return result;
        };
      });
      child = spawn(process.execPath, ['--import', 'tsx', 'test/support/keeper-sender-child.ts'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: childEnv({
          KEEPER_CHILD_DATABASE_URL: db.url, KEEPER_CHILD_RPC_URL: proxy.url, KEEPER_CHILD_STELLAR_SECRET: keeper.keypair.secret(),
          KEEPER_CHILD_PASSPHRASE: net.passphrase, KEEPER_CHILD_CHAIN_ID: CHAIN_ID, KEEPER_CHILD_LEASE_SECONDS: '5',
        }),
      });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await Promise.race([killed, new Promise((_, reject) => child!.once('exit', () => setTimeout(() => reject(new Error(`the child sender exited before sending:\n${output}`)), 500)))]);
      await new Promise((resolve) => (child!.exitCode !== null || child!.signalCode !== null ? resolve(undefined) : child!.once('exit', resolve)));
      proxy.mode = 'honest';
      expect((await keeperSendByKey(db.knex, input))!.send.status).toBe('sent');
      const successor = sender(keeper, { owner: 'successor' });
      // The dead sender's lease runs out first: until then the successor does nothing.
      expect((await successor.pass()).leading).toBe(false);
      await until(successor, input, 'confirmed', 'the successor confirmed the send', 30_000);
      const done = (await keeperSendByKey(db.knex, input))!;
      expect(done.attempts).toHaveLength(1);
      expect(done.send.txHash).toBe(done.attempts[0]!.txHash);
      expect(await keeper.sequence()).toBe(start + 1n);
      expect(await input.received()).toBe(TRANSFER);
    } finally {
      child?.kill('SIGKILL');
      await proxy.close();
    }
  });

  it('a send whose not_after has passed on the ledger clock is expired and nothing is sent; one still in its window cannot land past it', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const { closeTime } = await net.node.closeLedger();
    const late = await owedTransfer(keeper);
    const { id } = await enqueueKeeperSend(db.knex, late);
    // The ledger's time, not this machine's (the ledger clock runs hours ahead of it here).
    await db.knex('keeper_sends').where({ id }).update({ not_after: closeTime });
    const inTime = await owedTransfer(keeper);
    const second = await enqueueKeeperSend(db.knex, inTime);
    await db.knex('keeper_sends').where({ id: second.id }).update({ not_after: closeTime + 120 });
    const registry = new Registry();
    const keeperSender = sender(keeper, { metrics: keeperMetrics(registry) });
    await until(keeperSender, inTime, 'confirmed', 'the send in its window confirmed');
    const expired = (await keeperSendByKey(db.knex, late))!;
    expect(expired.send).toMatchObject({ status: 'expired', nonce: null });
    expect(expired.attempts).toHaveLength(0);
    const envelope = TransactionBuilder.fromXDR((await keeperSendByKey(db.knex, inTime))!.attempts[0]!.raw, net.passphrase) as Transaction;
    expect(envelope.timeBounds!.maxTime).toBe(String(closeTime + 119));
    expect(await keeper.sequence()).toBe(start + 1n);
    expect(await registry.metrics()).toContain(`relayer_keeper_sends_total{chain="${CHAIN_ID}",action="unlock",result="expired"} 1`);
    expect([await late.received(), await inTime.received()]).toEqual([0n, TRANSFER]);
  });

  it('stuck past KEEPER_REPLACE_AFTER_SECONDS: a fee bump around the same transaction, higher fee under the cap, and exactly one of them lands', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const proxy = await startRpcFaultProxy(net.node.rpcUrl);
    try {
      // The provider takes the first transaction and never relays it: it stays unknown to the ledger.
      proxy.swallows.sendTransaction = () => ({ status: 'PENDING' });
      const input = await owedTransfer(keeper);
      await enqueueKeeperSend(db.knex, input);
      // The replacement timer (this machine's clock, as for EVM) moved ahead for one pass only.
      let ahead = 0;
      const registry = new Registry();
      const keeperSender = sender(keeper, {
        rpc: rpcOf(proxy.url), now: () => Date.now() + ahead, metrics: keeperMetrics(registry),
        settings: { replaceAfterSeconds: 60, maxFeeStroops: 10_000_000, leaseSeconds: 30 },
      });
      await keeperSender.pass();
      const inner = (await keeperSendByKey(db.knex, input))!.attempts[0]!;
      await net.node.closeLedger();
      expect(await landed(inner.txHash)).toBe(false);
      delete proxy.swallows.sendTransaction;
      ahead = 61_000;
      await keeperSender.pass();
      ahead = 0;
      const bumped = (await keeperSendByKey(db.knex, input))!;
      expect(bumped.attempts).toHaveLength(2);
      const bump = TransactionBuilder.fromXDR(bumped.attempts[1]!.raw, net.passphrase) as FeeBumpTransaction;
      expect(bump).toBeInstanceOf(FeeBumpTransaction);
      expect(bump.feeSource).toBe(keeper.keypair.publicKey());
      expect(bump.innerTransaction.hash().toString('hex')).toBe(inner.txHash);
      // Signed by the keeper, over the fee bump's own hash for this network.
      expect(bump.signatures).toHaveLength(1);
      expect(keeper.keypair.verify(bump.hash(), bump.signatures[0]!.signature())).toBe(true);
      expect(BigInt(bump.fee)).toBeGreaterThan(inner.maxFeePerGas);
      expect(BigInt(bump.fee)).toBeLessThanOrEqual(10_000_000n);
      // Ten times the inner transaction's inclusion fee per operation: what a validator asks to replace a queued one.
      expect(bumped.attempts[1]!.maxPriorityFeePerGas).toBe(10n * inner.maxPriorityFeePerGas);
      await until(keeperSender, input, 'confirmed', 'one of the two confirmed');
      const done = (await keeperSendByKey(db.knex, input))!;
      const landedOnes = (await Promise.all(done.attempts.map((a) => landed(a.txHash)))).filter(Boolean);
      expect(landedOnes).toHaveLength(1);
      expect([inner.txHash, bumped.attempts[1]!.txHash]).toContain(done.send.txHash);
      expect(await keeper.sequence()).toBe(start + 1n);
      expect(await input.received()).toBe(TRANSFER);
      expect(await registry.metrics()).toContain(`relayer_keeper_sends_total{chain="${CHAIN_ID}",action="unlock",result="replaced"} 1`);
    } finally {
      await proxy.close();
    }
  });

  it('at KEEPER_STELLAR_MAX_FEE_STROOPS no fee bump is sent: counted once as capped, and the transaction lands once relayed', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const proxy = await startRpcFaultProxy(net.node.rpcUrl);
    try {
      proxy.swallows.sendTransaction = () => ({ status: 'PENDING' });
      const input = await owedTransfer(keeper);
      await enqueueKeeperSend(db.knex, input);
      await sender(keeper, { rpc: rpcOf(proxy.url) }).pass();
      const inner = (await keeperSendByKey(db.knex, input))!.attempts[0]!;
      let now = Date.now() + 10_000;
      const registry = new Registry();
      // A cap at the inner transaction's own fee: no fee bump (which pays one more operation's inclusion) fits.
      const capped = sender(keeper, {
        rpc: rpcOf(proxy.url), now: () => now, metrics: keeperMetrics(registry),
        settings: { replaceAfterSeconds: 1, maxFeeStroops: Number(inner.maxFeePerGas), leaseSeconds: 30 },
      });
      await capped.pass();
      now += 10_000;
      await capped.pass();
      expect((await keeperSendByKey(db.knex, input))!.attempts).toHaveLength(1);
      expect(await registry.metrics()).toContain(`relayer_keeper_sends_total{chain="${CHAIN_ID}",action="unlock",result="capped"} 1`);
      delete proxy.swallows.sendTransaction;
      await until(capped, input, 'confirmed', 'the capped transaction confirmed once relayed');
      expect((await keeperSendByKey(db.knex, input))!.send.txHash).toBe(inner.txHash);
      expect(await keeper.sequence()).toBe(start + 1n);
      expect(await input.received()).toBe(TRANSFER);
    } finally {
      await proxy.close();
    }
  });

  it('a transaction whose time bounds passed without landing is rebuilt on the account\'s next sequence number and lands once', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const proxy = await startRpcFaultProxy(net.node.rpcUrl);
    try {
      proxy.swallows.sendTransaction = () => ({ status: 'PENDING' });
      const input = await owedTransfer(keeper);
      await enqueueKeeperSend(db.knex, input);
      const keeperSender = sender(keeper, { rpc: rpcOf(proxy.url) });
      await keeperSender.pass();
      const first = (await keeperSendByKey(db.knex, input))!.attempts[0]!;
      const maxTime = Number((TransactionBuilder.fromXDR(first.raw, net.passphrase) as Transaction).timeBounds!.maxTime);
      const { closeTime } = await net.node.closeLedger();
      // Well past it: the devnet's ledgers close at least a second apart, so its ledger clock may run ahead of the one moved.
      await net.node.increaseTime(maxTime - closeTime + 30);
      expect((await rpcOf().latestLedger()).closeTime).toBeGreaterThan(BigInt(maxTime));
      delete proxy.swallows.sendTransaction;
      // Too late now for any ledger: the node refuses it, and the account shows its number unused.
      expect((await rpcOf().send(TransactionBuilder.fromXDR(first.raw, net.passphrase) as Transaction)).errorCode).toBe('txTooLate');
      await until(keeperSender, input, 'confirmed', 'the rebuilt transaction confirmed');
      const done = (await keeperSendByKey(db.knex, input))!;
      expect(done.attempts).toHaveLength(2);
      expect(done.send).toMatchObject({ txHash: done.attempts[1]!.txHash, nonce: start + 1n });
      expect(await landed(first.txHash)).toBe(false);
      expect(await keeper.sequence()).toBe(start + 1n);
      expect(await input.received()).toBe(TRANSFER);
    } finally {
      await proxy.close();
    }
  });

  it('a next sequence number in the database beyond the account\'s, with nothing in flight, leaves no gap: the send takes the account\'s next', async () => {
    const keeper = await keeperAccount();
    const start = await keeper.sequence();
    const input = await owedTransfer(keeper);
    await enqueueKeeperSend(db.knex, input);
    const keeperSender = sender(keeper);
    await keeperSender.pass();
    await until(keeperSender, input, 'confirmed', 'the first refund confirmed');
    // Numbers handed out and never used by anything the outbox still holds (a database restored from an older backup).
    await db.knex('keeper_accounts').where({ chain_id: CHAIN_ID, account: keeper.keypair.publicKey() }).update({ next_nonce: String(start + 5n) });
    const next = await owedTransfer(keeper);
    await enqueueKeeperSend(db.knex, next);
    await until(keeperSender, next, 'confirmed', 'the second refund confirmed');
    expect((await keeperSendByKey(db.knex, next))!.send.nonce).toBe(start + 2n);
    expect(await keeper.sequence()).toBe(start + 2n);
    expect([await input.received(), await next.received()]).toEqual([TRANSFER, TRANSFER]);
  });

  it('the runner sends on a registered Stellar chain with its network passphrase and gives its lease up on stop', async () => {
    const keeper = await keeperAccount();
    const input = await owedTransfer(keeper);
    await enqueueKeeperSend(db.knex, input);
    const runner = startKeeperRunner({
      knex: db.knex, signer: keeper.signer,
      chains: async () => [{ kind: 'STELLAR', chainId: CHAIN_ID, rpcUrl: net.node.rpcUrl, rpcUrls: null, confirmations: 1, networkPassphrase: net.passphrase }],
      settings: { replaceAfterSeconds: 3_600, maxFeeGwei: 500, stellarMaxFeeStroops: 10_000_000, leaseSeconds: 30, pollSeconds: 3_600 },
    });
    try {
      await eventually('the Stellar send confirmed', () => runner.passAll().then(() => keeperSendByKey(db.knex, input)), (s) => s?.send.status === 'confirmed');
      expect(await input.received()).toBe(TRANSFER);
    } finally {
      await runner.stop();
    }
    const lease = await db.knex('keeper_accounts').where({ chain_id: CHAIN_ID, account: keeper.keypair.publicKey() }).first();
    expect(lease.lease_owner).toBeNull();
  });
});
