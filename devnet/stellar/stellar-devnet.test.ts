import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  Account, Address, Asset, BASE_FEE, Keypair, nativeToScVal, Operation, rpc, scValToNative, TransactionBuilder, xdr,
} from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionFields } from '../../chains/request-schema.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners, createRotatingSigner } from '../../chains/signers.ts';
import { stellarContractCall } from '../../chains/stellar/call-args.ts';
import { readStellarPortalRoot } from '../../chains/stellar/portal.ts';
import { MerkleTreeStore } from '../../prover/merkle/store.ts';
import { createTestDatabase } from '../../test/support/db.ts';
import { fund, sendAndWait, submitOperation } from './client.ts';
import { deployStellarContracts, freshNetworkContractIds, mintTestToken, STELLAR_DEPLOYER, type StellarDeployment } from './deploy.ts';
import { STELLAR_DEVNET_CHAIN_ID, withStellarDevnet, type RegistryFile } from '../registry-file.ts';
import { devnetRpc, startStellarNode, type StellarNode } from './node.ts';

/**
 * The local Soroban network on the real host, driven only through the Stellar RPC with
 * @stellar/stellar-sdk as a dApp drives a public network.
 */

const relayer = Keypair.random();
let dataDir: string;
let node: StellarNode;
let server: rpc.Server;
let deployment: StellarDeployment;

async function balance(token: string, holder: string): Promise<bigint> {
  const source = await server.getAccount(deployment.deployer);
  const tx = new TransactionBuilder(source, { fee: BASE_FEE, networkPassphrase: node.networkPassphrase })
    .addOperation(Operation.invokeContractFunction({ contract: token, function: 'balance', args: [new Address(holder).toScVal()] }))
    .setTimeout(30).build();
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`balance: ${JSON.stringify(sim)}`);
  return scValToNative(sim.result!.retval) as bigint;
}

async function start(): Promise<void> {
  node = await startStellarNode({ dataDir, ledgerMs: 200 });
  server = new rpc.Server(node.rpcUrl, { allowHttp: true });
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'stellar-devnet-'));
  await start();
  deployment = await deployStellarContracts({
    server, networkPassphrase: node.networkPassphrase, relayer: relayer.publicKey(), chainId: 148n, domain: { name: 'ProofBridge', version: '1' },
  });
}, 15 * 60_000);

afterAll(async () => {
  await node?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

// Before the tests that move the ledger clock: the deployment below submits on this machine's clock.
describe('relayer key rotation on the local network (docs/security.md "Rotating keys")', () => {
  it("executes the old key's request signed before the switch during the grace period, the new key's after it, and refuses the old key once the admin ends the grace", async () => {
    const domain = { name: 'ProofBridge', version: '1' };
    const keys = (stellar: Keypair) => createRelayerSigners({ relayerEvmPrivateKey: Wallet.createRandom().privateKey, relayerStellarSecret: stellar.secret() }, domain);
    const oldKey = keys(Keypair.random());
    const newKey = keys(Keypair.random());
    const ours = await deployStellarContracts({ server, networkPassphrase: node.networkPassphrase, relayer: oldKey.stellar.publicKey(), chainId: 148n, domain });
    const maker = Keypair.random();
    await fund(server, maker.publicKey());
    const ledgerNow = async () => Number((await devnetRpc<{ closeTime: string }>(node.rpcUrl, 'getLatestLedger')).closeTime);
    const t0 = await ledgerNow();
    const switchAt = t0 + 60;
    const rotating = { signer: createRotatingSigner(oldKey.signer, newKey.signer, switchAt * 1000), domain };
    const target = { kind: 'STELLAR' as const, chainId: '148', contractAddress: ours.adManager, networkPassphrase: node.networkPassphrase };
    const sign = <A extends 'createAd' | 'fundAd'>(action: A, fields: ActionFields<A>, at: number) =>
      buildSignedCallData({ target, action, fields, signers: rotating, ttlSeconds: 600, now: at * 1000 });
    const submit = async (action: 'createAd' | 'fundAd', data: Awaited<ReturnType<typeof sign>>) =>
      submitOperation(server, node.networkPassphrase, maker, stellarContractCall(action, data as never), { ledgerTime: await ledgerNow() });
    const admin = async (fn: string, args: xdr.ScVal[], who: Keypair = STELLAR_DEPLOYER) =>
      submitOperation(server, node.networkPassphrase, who, Operation.invokeContractFunction({ contract: ours.adManager, function: fn, args }), { ledgerTime: await ledgerNow() });
    const adId = randomUUID();

    const created = await sign('createAd', { adId, adCreator: maker.publicKey(), adToken: ours.xlm, initialAmount: 1_000n, orderChainId: '31337', adRecipient: Wallet.createRandom().address }, t0);
    expect(created.signerPublicKey).toBe(oldKey.stellar.publicKey());
    await submit('createAd', created);
    const inFlight = await sign('fundAd', { adId, amount: 10n }, t0 + 1);
    const leaked = await sign('fundAd', { adId, amount: 20n }, t0 + 2);
    expect(inFlight.signerPublicKey).toBe(oldKey.stellar.publicKey());

    // Only the admin (the devnet's deployer) rotates.
    const newKeyArg = nativeToScVal(newKey.stellar.rawPublicKey(), { type: 'bytes' });
    await expect(admin('rotate_relayer', [newKeyArg, nativeToScVal(3_600, { type: 'u64' })], maker)).rejects.toThrow();
    await admin('rotate_relayer', [newKeyArg, nativeToScVal(3_600, { type: 'u64' })]);

    const afterSwitch = await sign('fundAd', { adId, amount: 100n }, switchAt);
    expect(afterSwitch.signerPublicKey).toBe(newKey.stellar.publicKey());
    await submit('fundAd', afterSwitch);
    await submit('fundAd', inFlight);
    await admin('set_previous_relayer_until', [nativeToScVal(0, { type: 'u64' })]);
    await expect(submit('fundAd', leaked)).rejects.toThrow(/#20\b/);
    const ad = scValToNative((await server.simulateTransaction(new TransactionBuilder(await server.getAccount(maker.publicKey()), { fee: BASE_FEE, networkPassphrase: node.networkPassphrase })
      .addOperation(Operation.invokeContractFunction({ contract: ours.adManager, function: 'ad', args: [nativeToScVal(Buffer.from(`${'0'.repeat(32)}${adId.replaceAll('-', '')}`, 'hex'), { type: 'bytes' })] }))
      .setTimeout(30).build()) as rpc.Api.SimulateTransactionSuccessResponse).result!.retval) as { available: bigint };
    expect(ad.available).toBe(1_110n);
  });
});

describe('the local Stellar network', () => {
  it('answers the RPC an sdk client asks at connection: health, network, latest ledger, versions, fees', async () => {
    expect((await server.getHealth()).status).toBe('healthy');
    expect(await server.getNetwork()).toMatchObject({ passphrase: node.networkPassphrase, protocolVersion: 25 });
    const first = await server.getLatestLedger();
    await node.closeLedger();
    expect((await server.getLatestLedger()).sequence).toBeGreaterThan(first.sequence);
    expect((await server.getVersionInfo()).protocolVersion).toBe(25);
    expect((await server.getFeeStats()).sorobanInclusionFee.min).toBe('100');
  });

  it('answers a browser page on another origin as a public Stellar RPC does: the preflight 204, every answer Access-Control-Allow-Origin *', async () => {
    const preflight = await fetch(node.rpcUrl, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:3000', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('*');
    const answer = await fetch(node.rpcUrl, {
      method: 'POST', headers: { 'content-type': 'application/json', Origin: 'http://localhost:3000' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth' }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('deploys on a fresh network to the ids devnet/registry.json names for chain 148, with the local RPC', async () => {
    expect(deployment).toMatchObject(freshNetworkContractIds(node.networkPassphrase));
    const committed = JSON.parse(readFileSync(new URL('../registry.json', import.meta.url), 'utf8')) as RegistryFile;
    const S = STELLAR_DEVNET_CHAIN_ID;
    const evmOnly: RegistryFile = {
      chains: committed.chains.filter((c) => c.chainId !== S),
      tokens: committed.tokens.filter((t) => t.chainId !== S),
      routes: committed.routes.filter((r) => r.adToken.chainId !== S && r.orderToken.chainId !== S),
    };
    // What `npm start` registers (devnet/registry-file.ts withStellarDevnet) on its default port 8000: the file says the same.
    const started = withStellarDevnet(evmOnly, { rpcUrl: 'http://127.0.0.1:8000', networkPassphrase: node.networkPassphrase, deployment });
    expect(committed.chains.filter((c) => c.chainId === S)).toEqual(started.chains.filter((c) => c.chainId === S));
    expect(committed.tokens.filter((t) => t.chainId === S)).toEqual(started.tokens.filter((t) => t.chainId === S));
    expect(new Set(committed.routes.map((r) => JSON.stringify(r)))).toEqual(new Set(started.routes.map((r) => JSON.stringify(r))));
  });

  it('gives another relayer contracts of its own on the same network, never the ones trusting someone else; each finds its own again', async () => {
    const other = Keypair.random();
    const options = { server, networkPassphrase: node.networkPassphrase, chainId: 148n, domain: { name: 'ProofBridge', version: '1' } };
    const theirs = await deployStellarContracts({ ...options, relayer: other.publicKey() });
    expect(theirs.adManager).not.toBe(deployment.adManager);
    expect(theirs.orderPortal).not.toBe(deployment.orderPortal);
    expect({ xlm: theirs.xlm, testToken: theirs.testToken }).toEqual({ xlm: deployment.xlm, testToken: deployment.testToken });
    expect(await deployStellarContracts({ ...options, relayer: other.publicKey() })).toEqual(theirs);
    expect(await deployStellarContracts({ ...options, relayer: relayer.publicKey() })).toEqual(deployment);
  });

  it('deploys the contracts as wasm: the sdk reads their code back by contract id', async () => {
    for (const id of [deployment.adManager, deployment.orderPortal, deployment.testToken]) {
      const wasm = await server.getContractWasmByContractId(id);
      expect(wasm.subarray(0, 4)).toEqual(Buffer.from([0, 0x61, 0x73, 0x6d]));
    }
  });

  it('moves native XLM through its Stellar Asset Contract only with the holder\'s signed authorization, and charges fees', async () => {
    const alice = Keypair.random();
    const bob = Keypair.random();
    await fund(server, alice.publicKey());
    await fund(server, bob.publicKey());
    expect(await balance(deployment.xlm, alice.publicKey())).toBe(100_000_000_000n);
    const transfer = (from: Keypair, amount: bigint) => Operation.invokeContractFunction({
      contract: deployment.xlm, function: 'transfer',
      args: [new Address(from.publicKey()).toScVal(), new Address(bob.publicKey()).toScVal(), nativeToScVal(amount, { type: 'i128' })],
    });
    // Alice pays from her own account: the source-account credential covers the auth.
    const paid = await submitOperation(server, node.networkPassphrase, alice, transfer(alice, 5_000_000n));
    expect(paid.ledger).toBeGreaterThan(0);
    expect(await balance(deployment.xlm, bob.publicKey())).toBe(100_005_000_000n);
    const aliceAfter = await balance(deployment.xlm, alice.publicKey());
    const fee = 100_000_000_000n - 5_000_000n - aliceAfter;
    expect(fee).toBeGreaterThan(100n);
    // Bob submits a transfer out of Alice's account: without her signed auth entry the host refuses it.
    await expect(submitOperation(server, node.networkPassphrase, bob, transfer(alice, 1n))).rejects.toThrow();
    // With Alice's signature on the auth entry (a wallet's authorizeEntry), Bob can submit it.
    await submitOperation(server, node.networkPassphrase, bob, transfer(alice, 7n), { authSigners: [alice] });
    expect(await balance(deployment.xlm, alice.publicKey())).toBe(aliceAfter - 7n);
  });

  it('refuses a forged signature, a reused sequence number and an unfunded account at submission', async () => {
    const carol = Keypair.random();
    await fund(server, carol.publicKey());
    const pay = (source: Account) => new TransactionBuilder(source, { fee: BASE_FEE, networkPassphrase: node.networkPassphrase })
      .addOperation(Operation.payment({ destination: deployment.deployer, asset: Asset.native(), amount: '1' }))
      .setTimeout(30).build();
    const sequence = (await server.getAccount(carol.publicKey())).sequenceNumber();
    const forged = pay(new Account(carol.publicKey(), sequence));
    forged.sign(Keypair.random());
    await expect(sendAndWait(server, forged)).rejects.toThrow(/txBadAuth/);
    const good = pay(new Account(carol.publicKey(), sequence));
    good.sign(carol);
    await sendAndWait(server, good);
    const reused = pay(new Account(carol.publicKey(), sequence));
    reused.sign(carol);
    await expect(sendAndWait(server, reused)).rejects.toThrow(/txBadSeq/);
    const nobody = Keypair.random();
    const ghost = pay(new Account(nobody.publicKey(), '1'));
    ghost.sign(nobody);
    await expect(sendAndWait(server, ghost)).rejects.toThrow(/txNoAccount/);
  });

  it('mints the SEP-41 test token by its admin and reports its events through getEvents with topic filters and cursors', async () => {
    const holder = Keypair.random();
    await fund(server, holder.publicKey());
    const start = (await server.getLatestLedger()).sequence;
    for (const amount of [1n, 2n, 3n]) await mintTestToken(server, node.networkPassphrase, deployment.testToken, holder.publicKey(), amount);
    expect(await balance(deployment.testToken, holder.publicKey())).toBe(6n);
    const filters: rpc.Api.EventFilter[] = [{ type: 'contract', contractIds: [deployment.testToken], topics: [[xdr.ScVal.scvSymbol('mint').toXDR('base64'), '*', '*']] }];
    const first = await server.getEvents({ filters, startLedger: start, limit: 2 });
    expect(first.events.map((e) => scValToNative(e.value))).toEqual([1n, 2n]);
    const second = await server.getEvents({ filters, cursor: first.cursor, limit: 2 });
    expect(second.events.map((e) => scValToNative(e.value))).toEqual([3n]);
    const none = await server.getEvents({ filters: [{ type: 'contract', contractIds: [deployment.testToken], topics: [[xdr.ScVal.scvSymbol('burn').toXDR('base64'), '**']] }], startLedger: start });
    expect(none.events).toEqual([]);
  });

  it('serves the deployed OrderPortal\'s root and leaf count to the service\'s reader: the empty tree\'s root', async () => {
    const db = await createTestDatabase();
    try {
      const empty = await new MerkleTreeStore(db.knex).getState({ chainId: '148', portalAddress: deployment.orderPortal });
      expect(await readStellarPortalRoot(server, deployment.orderPortal)).toEqual({ root: empty.root, leafCount: 0 });
    } finally {
      await db.drop();
    }
  });

  it('answers malformed requests with JSON-RPC errors and keeps serving', async () => {
    const raw = async (body: string) => (await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json() as Promise<any>;
    expect((await raw('{not json')).error.code).toBe(-32700);
    expect((await raw('{"jsonrpc":"2.0","id":1}')).error.code).toBe(-32600);
    expect((await raw('{"jsonrpc":"2.0","id":1,"method":"noSuchMethod"}')).error.code).toBe(-32601);
    expect((await raw('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":{"transaction":"AAAA"}}')).error.code).toBe(-32602);
    expect((await raw('{"jsonrpc":"2.0","id":1,"method":"getEvents","params":{"startLedger":999999999}}')).error.message).toMatch(/startLedger must be between/);
    expect((await raw('{"jsonrpc":"2.0","id":1,"method":"getLedgerEntries","params":{"keys":["!!"]}}')).error.code).toBe(-32602);
    expect((await raw('[1,2]')).error.code).toBe(-32600);
    expect((await server.getHealth()).status).toBe('healthy');
  });

  it('moves ledger time forward for tests', async () => {
    const before = await devnetRpc<{ closeTime: string }>(node.rpcUrl, 'getLatestLedger');
    const moved = await node.increaseTime(7 * 3600);
    expect(moved.closeTime).toBeGreaterThanOrEqual(Number(before.closeTime) + 7 * 3600);
  });

  it('keeps its ledger across a restart from the data dir', async () => {
    const latest = (await server.getLatestLedger()).sequence;
    const holderBalance = await balance(deployment.xlm, deployment.deployer);
    await node.stop();
    const started = Date.now();
    await start();
    const startupMs = Date.now() - started;
    console.log(`stellar-devnet restart: ${startupMs} ms`);
    expect((await server.getLatestLedger()).sequence).toBeGreaterThanOrEqual(latest);
    expect(await balance(deployment.xlm, deployment.deployer)).toBe(holderBalance);
    const again = await deployStellarContracts({
      server, networkPassphrase: node.networkPassphrase, relayer: relayer.publicKey(), chainId: 148n, domain: { name: 'ProofBridge', version: '1' },
    });
    expect(again).toEqual(deployment);
  });
});
