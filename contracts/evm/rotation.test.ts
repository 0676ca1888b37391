import { randomUUID } from 'node:crypto';
import { Keypair } from '@stellar/stellar-sdk';
import { Contract, ContractFactory, Interface, JsonRpcProvider, NonceManager, Wallet, ZeroAddress, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { createRelayerSigners, createRotatingSigner, type RelayerSigners } from '../../chains/signers.ts';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { startAnvil, type AnvilInstance } from '../../devnet/anvil.ts';
import { loadDevnetArtifacts, type DevnetArtifacts } from './artifacts.ts';

/**
 * Relayer key rotation without downtime on anvil (docs/security.md "Rotating keys"): the admin's
 * rotateRelayer makes the new key the relayer and keeps the previous one for a grace period; the
 * service's rotating signer (RELAYER_KEY_SWITCH_AT) signs with the old key before its switch and the
 * new one from it. A request signed by the old key before the switch executes within the grace
 * period and is refused (InvalidSignature) from its end; only the admin rotates or moves the grace.
 */
const domain = { name: 'ProofBridge', version: '1' };
const keys = (evm: string) => createRelayerSigners({ relayerEvmPrivateKey: evm, relayerStellarSecret: Keypair.random().secret() }, domain);
const oldKey = keys(Wallet.createRandom().privateKey);
const newKey = keys(Wallet.createRandom().privateKey);
const [deployer, maker, stranger] = anvilAccounts(3);
const TTL = 600;

let anvil: AnvilInstance;
let provider: JsonRpcProvider;
let artifacts: DevnetArtifacts;
let errors: Interface;
let chainId: string;

beforeAll(async () => {
  [anvil, artifacts] = await Promise.all([startAnvil({ chainId: 31337, startTimeoutMs: 90_000 }), loadDevnetArtifacts()]);
  chainId = String(anvil.chainId);
  provider = new JsonRpcProvider(anvil.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 50 });
  errors = new Interface((artifacts.adManager.abi as { type?: string }[]).filter((entry) => entry.type === 'error') as never[]);
});

afterAll(async () => {
  provider?.destroy();
  await anvil?.stop();
});

/** A fresh AdManager trusting the old key, deployed by the admin (anvil account 0), and a token the maker holds. */
async function deployed() {
  const admin = new NonceManager(new Wallet(deployer!.privateKey, provider));
  const deploy = async (artifact: { abi: unknown[]; bytecode: string }, ...args: unknown[]) => {
    const contract = await new ContractFactory(artifact.abi as InterfaceAbi, artifact.bytecode, admin).deploy(...args);
    await contract.waitForDeployment();
    return contract.getAddress();
  };
  const token = await deploy(artifacts.testErc20, 'Test USD', 'TUSD', 6);
  const adManager = await deploy(artifacts.adManager, oldKey.evmAddress, ZeroAddress, domain.name, domain.version);
  const makerWallet = new NonceManager(new Wallet(maker!.privateKey, provider));
  const tokenAsMaker = new Contract(token, artifacts.testErc20.abi as InterfaceAbi, makerWallet);
  await (await tokenAsMaker.getFunction('mint')(maker!.address, 1_000_000n)).wait();
  await (await tokenAsMaker.getFunction('approve')(adManager, 1_000_000n)).wait();
  const as = (account: { privateKey: string }) =>
    new Contract(adManager, artifacts.adManager.abi as InterfaceAbi, account === maker ? makerWallet : new Wallet(account.privateKey, provider));
  return { token, adManager, asAdmin: new Contract(adManager, artifacts.adManager.abi as InterfaceAbi, admin), asMaker: as(maker!), asStranger: as(stranger!) };
}

async function chainNow(): Promise<number> {
  return (await provider.getBlock('latest'))!.timestamp;
}

/** Mines the next transaction at `seconds` (anvil). */
async function nextBlockAt(seconds: number): Promise<void> {
  await provider.send('evm_setNextBlockTimestamp', [seconds]);
}

/** The custom error a call reverted with, or 'ok' once mined. */
async function outcome(call: () => Promise<{ wait(): Promise<unknown> }>): Promise<string> {
  try {
    await (await call()).wait();
    return 'ok';
  } catch (error) {
    const data = (error as { data?: string; info?: { error?: { data?: string } } }).data;
    if (!data) throw error;
    return errors.parseError(data)?.name ?? data;
  }
}

/** The service's rotating signer: the old key before `switchAtSeconds`, the new one from it. */
function rotating(switchAtSeconds: number): RelayerSigners {
  return { signer: createRotatingSigner(oldKey.signer, newKey.signer, switchAtSeconds * 1000), domain };
}

async function signFund(adManager: string, signers: RelayerSigners, adId: string, atSeconds: number) {
  return buildSignedCallData({
    target: { kind: 'EVM', chainId, contractAddress: adManager },
    action: 'fundAd',
    fields: { adId, amount: 5n },
    signers,
    ttlSeconds: TTL,
    now: atSeconds * 1000,
  });
}

/** A TUSD ad of the maker's, created with a request the old key signed. */
async function createAd(c: Awaited<ReturnType<typeof deployed>>, at: number): Promise<string> {
  const adId = randomUUID();
  const data = await buildSignedCallData({
    target: { kind: 'EVM', chainId, contractAddress: c.adManager },
    action: 'createAd',
    fields: { adId, adCreator: maker!.address, adToken: c.token, initialAmount: 100n, orderChainId: '31338', adRecipient: maker!.address },
    signers: oldKey,
    ttlSeconds: TTL,
    now: at * 1000,
  });
  const call = evmContractCall('createAd', data);
  expect(await outcome(() => c.asMaker.getFunction(call.functionName)(...call.args))).toBe('ok');
  return adId;
}

const fund = (c: Awaited<ReturnType<typeof deployed>>, data: Awaited<ReturnType<typeof signFund>>) => () => {
  const call = evmContractCall('fundAd', data);
  return c.asMaker.getFunction(call.functionName)(...call.args);
};

describe('relayer key rotation on the EVM contracts', () => {
  it('executes a request the old key signed before the switch during the grace period, and the new key\'s after the switch', async () => {
    const c = await deployed();
    const t0 = await chainNow();
    const adId = await createAd(c, t0);
    const switchAt = t0 + 120;
    const signers = rotating(switchAt);
    // Signed before the switch: the old key. Held by the Maker while the admin rotates.
    const inFlight = await signFund(c.adManager, signers, adId, t0 + 10);
    expect(inFlight.signature).toBe(await oldKey.signer.signEvmDigest(inFlight.reqHash));

    expect(await outcome(() => c.asAdmin.getFunction('rotateRelayer')(newKey.evmAddress, 3_600))).toBe('ok');
    const rotatedAt = await chainNow();
    expect(await c.asAdmin.getFunction('relayer')()).toBe(newKey.evmAddress);
    expect(await c.asAdmin.getFunction('previousRelayer')()).toBe(oldKey.evmAddress);
    expect(await c.asAdmin.getFunction('previousRelayerUntil')()).toBe(BigInt(rotatedAt + 3_600));

    // From the switch the service signs with the new key, which the contract now trusts.
    const afterSwitch = await signFund(c.adManager, signers, adId, switchAt);
    expect(afterSwitch.signature).toBe(await newKey.signer.signEvmDigest(afterSwitch.reqHash));
    await nextBlockAt(switchAt + 1);
    expect(await outcome(fund(c, afterSwitch))).toBe('ok');
    // The old key's request, signed before the switch, still executes within the grace period.
    expect(await outcome(fund(c, inFlight))).toBe('ok');
    expect((await c.asAdmin.getFunction('ads')(`0x${'0'.repeat(32)}${adId.replaceAll('-', '')}`)).available).toBe(110n);
  });

  it('refuses a request of the retired key from the end of the grace period (InvalidSignature), within its deadline', async () => {
    const c = await deployed();
    const t0 = await chainNow();
    const adId = await createAd(c, t0);
    const signers = rotating(t0 + 1_000);
    const first = await signFund(c.adManager, signers, adId, t0 + 1);
    const second = await signFund(c.adManager, signers, adId, t0 + 2);
    expect(await outcome(() => c.asAdmin.getFunction('rotateRelayer')(newKey.evmAddress, 60))).toBe('ok');
    const until = Number(await c.asAdmin.getFunction('previousRelayerUntil')());
    const snapshot = await provider.send('evm_snapshot', []);
    await nextBlockAt(until - 1);
    expect(await outcome(fund(c, first))).toBe('ok');
    await provider.send('evm_revert', [snapshot]);
    // The request's deadline (signed at t0 + 1 for 600 s) is still ahead: the key decides, not the deadline.
    expect(Number(first.deadline)).toBeGreaterThan(until);
    await nextBlockAt(until);
    expect(await outcome(fund(c, first))).toBe('InvalidSignature');
    expect(await outcome(fund(c, second))).toBe('InvalidSignature');
  });

  it('lets the admin end the grace period at once (a leaked old key)', async () => {
    const c = await deployed();
    const t0 = await chainNow();
    const adId = await createAd(c, t0);
    const old = await signFund(c.adManager, { signer: oldKey.signer, domain }, adId, t0);
    expect(await outcome(() => c.asAdmin.getFunction('rotateRelayer')(newKey.evmAddress, 3_600))).toBe('ok');
    expect(await outcome(() => c.asAdmin.getFunction('setPreviousRelayerUntil')(0))).toBe('ok');
    expect(await outcome(fund(c, old))).toBe('InvalidSignature');
  });

  it('lets only the admin rotate or set the grace period, and never to the zero address', async () => {
    const c = await deployed();
    expect(await c.asAdmin.getFunction('admin')()).toBe(deployer!.address);
    expect(await outcome(() => c.asStranger.getFunction('rotateRelayer')(stranger!.address, 3_600))).toBe('NotAdmin');
    expect(await outcome(() => c.asMaker.getFunction('setPreviousRelayerUntil')(2n ** 40n))).toBe('NotAdmin');
    expect(await outcome(() => c.asAdmin.getFunction('rotateRelayer')(ZeroAddress, 3_600))).toBe('ZeroRelayer');
    expect(await c.asAdmin.getFunction('relayer')()).toBe(oldKey.evmAddress);
    expect(await c.asAdmin.getFunction('previousRelayer')()).toBe(ZeroAddress);
  });
});
