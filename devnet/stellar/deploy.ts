import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  Address, Asset, hash, Keypair, nativeToScVal, Operation, rpc, scValToNative, StrKey, xdr,
} from '@stellar/stellar-sdk';
import { SOROBAN_WASM } from './build.ts';
import { fund, submitOperation } from './client.ts';

/** What the devnet deploys on the local Stellar network. */
export interface StellarDeployment {
  adManager: string;
  orderPortal: string;
  /** The Stellar Asset Contract of native XLM. */
  xlm: string;
  /** The SEP-41 test token (contracts/soroban/test-token), 7 decimals, symbol TUSD. */
  testToken: string;
  /** The deployer, also the test token's admin (DEVNET ONLY: derived from a public phrase). */
  deployer: string;
}

/** DEVNET ONLY: the deployer's key, from a public phrase, so every run deploys the same contract ids. */
export const STELLAR_DEPLOYER = Keypair.fromRawEd25519Seed(createHash('sha256').update('relayer stellar devnet deployer').digest());

export const TEST_TOKEN_SYMBOL = 'TUSD';
export const TEST_TOKEN_DECIMALS = 7;

/** The contract id a `createCustomContract` from `deployer` with `salt` gets on the network. */
export function contractIdFor(deployer: string, salt: Buffer, networkPassphrase: string): string {
  const preimage = xdr.HashIdPreimage.envelopeTypeContractId(
    new xdr.HashIdPreimageContractId({
      networkId: hash(Buffer.from(networkPassphrase)),
      contractIdPreimage: xdr.ContractIdPreimage.contractIdPreimageFromAddress(
        new xdr.ContractIdPreimageFromAddress({ address: new Address(deployer).toScAddress(), salt }),
      ),
    }),
  );
  return StrKey.encodeContract(hash(preimage.toXDR()));
}

function salt(name: string): Buffer {
  return createHash('sha256').update(`relayer devnet ${name}`).digest();
}

async function contractExists(server: rpc.Server, contractId: string): Promise<boolean> {
  const key = xdr.LedgerKey.contractData(new xdr.LedgerKeyContractData({
    contract: new Address(contractId).toScAddress(),
    key: xdr.ScVal.scvLedgerKeyContractInstance(),
    durability: xdr.ContractDataDurability.persistent(),
  }));
  return (await server.getLedgerEntries(key)).entries.length > 0;
}

async function uploadAndCreate(server: rpc.Server, passphrase: string, saltName: string, wasmFile: string, args: xdr.ScVal[]): Promise<string> {
  const deployer = STELLAR_DEPLOYER;
  const id = contractIdFor(deployer.publicKey(), salt(saltName), passphrase);
  if (await contractExists(server, id)) return id;
  const wasm = readFileSync(wasmFile);
  await submitOperation(server, passphrase, deployer, Operation.uploadContractWasm({ wasm }));
  const created = await submitOperation(server, passphrase, deployer, Operation.createCustomContract({
    address: new Address(deployer.publicKey()),
    wasmHash: hash(wasm),
    salt: salt(saltName),
    constructorArgs: args,
  }));
  const returned = created.returnValue ? Address.fromScVal(created.returnValue).toString() : id;
  if (returned !== id) throw new Error(`${saltName} deployed at ${returned}, expected ${id}`);
  return id;
}

/**
 * The relayer key and chain id a deployed AdManager or OrderPortal trusts (its instance storage's
 * `Config`), when it runs `wasmFile`'s code; undefined for a contract of other code (a network kept
 * from before a contract change: its interface may differ, so it is not this relayer's).
 */
async function trustedBy(server: rpc.Server, contractId: string, wasmFile: string): Promise<{ relayer: Buffer; chainId: bigint } | undefined> {
  const key = xdr.LedgerKey.contractData(new xdr.LedgerKeyContractData({
    contract: new Address(contractId).toScAddress(),
    key: xdr.ScVal.scvLedgerKeyContractInstance(),
    durability: xdr.ContractDataDurability.persistent(),
  }));
  const entry = (await server.getLedgerEntries(key)).entries[0];
  const instance = entry?.val.contractData().val().instance();
  if (!instance || !Buffer.from(instance.executable().wasmHash()).equals(hash(readFileSync(wasmFile)))) return undefined;
  const storage = instance.storage() ?? [];
  const config = storage.find((item) => JSON.stringify(scValToNative(item.key())) === '["Config"]');
  if (!config) return undefined;
  const value = scValToNative(config.val()) as { relayer: Buffer; chain_id: bigint };
  return { relayer: Buffer.from(value.relayer), chainId: BigInt(value.chain_id) };
}

/**
 * Deploys (or finds) the AdManager or OrderPortal `name` for a relayer. The first relayer on a
 * fresh network gets the plain salt, so the ids are the same on every fresh network whatever the
 * relayer key (devnet/registry.json names them, as it names the anvil addresses); a contract
 * already there that trusts another relayer or chain id is left alone and this relayer's goes to
 * a salt tagged with its key and chain id: never a contract trusting someone else.
 */
async function deployForRelayer(
  server: rpc.Server,
  passphrase: string,
  name: string,
  wasmFile: string,
  relayer: Buffer,
  chainId: bigint,
  args: xdr.ScVal[],
): Promise<string> {
  const tag = createHash('sha256').update(relayer).update(chainId.toString()).digest('hex').slice(0, 16);
  for (const saltName of [name, `${name} ${tag}`]) {
    const id = contractIdFor(STELLAR_DEPLOYER.publicKey(), salt(saltName), passphrase);
    if (!(await contractExists(server, id))) return uploadAndCreate(server, passphrase, saltName, wasmFile, args);
    const trusted = await trustedBy(server, id, wasmFile);
    if (trusted && trusted.relayer.equals(relayer) && trusted.chainId === chainId) return id;
  }
  throw new Error(`${name}: both its ids are taken by contracts trusting another relayer`);
}

/**
 * The ids the devnet's contracts get on a fresh network with `networkPassphrase` (whatever the
 * relayer: see `deployForRelayer`); devnet/registry.json names them for the local network.
 */
export function freshNetworkContractIds(networkPassphrase: string): Omit<StellarDeployment, 'deployer'> {
  const id = (name: string) => contractIdFor(STELLAR_DEPLOYER.publicKey(), salt(name), networkPassphrase);
  return { adManager: id('ad-manager'), orderPortal: id('order-portal'), xlm: Asset.native().contractId(networkPassphrase), testToken: id('test-token') };
}

export interface DeployStellarOptions {
  server: rpc.Server;
  networkPassphrase: string;
  /** The relayer's Stellar account (G...): its ed25519 key signs the requests the contracts accept. */
  relayer: string;
  /** The registry chain id the contracts bind into every request hash. */
  chainId: bigint;
  domain: { name: string; version: string };
}

/**
 * Deploys (or finds, on a network restarted from its data dir) the AdManager, OrderPortal, the
 * native XLM Stellar Asset Contract and the SEP-41 test token, from the deterministic deployer
 * funded by the network's friendbot. The first relayer on a fresh network gets `freshNetworkContractIds`.
 */
export async function deployStellarContracts(options: DeployStellarOptions): Promise<StellarDeployment> {
  const { server, networkPassphrase: passphrase } = options;
  await fund(server, STELLAR_DEPLOYER.publicKey());
  const xlm = Asset.native().contractId(passphrase);
  if (!(await contractExists(server, xlm))) {
    await submitOperation(server, passphrase, STELLAR_DEPLOYER, Operation.createStellarAssetContract({ asset: Asset.native() }));
  }
  const relayerKey = Buffer.from(StrKey.decodeEd25519PublicKey(options.relayer));
  const constructor = [
    nativeToScVal(relayerKey, { type: 'bytes' }),
    nativeToScVal(options.chainId, { type: 'u256' }),
    nativeToScVal(options.domain.name, { type: 'string' }),
    nativeToScVal(options.domain.version, { type: 'string' }),
    // The admin who may rotate the relayer key (rotate_relayer): the devnet's deployer.
    new Address(STELLAR_DEPLOYER.publicKey()).toScVal(),
  ];
  const adManager = await deployForRelayer(server, passphrase, 'ad-manager', SOROBAN_WASM.adManager, relayerKey, options.chainId, constructor);
  const orderPortal = await deployForRelayer(server, passphrase, 'order-portal', SOROBAN_WASM.orderPortal, relayerKey, options.chainId, constructor);
  const testToken = await uploadAndCreate(server, passphrase, 'test-token', SOROBAN_WASM.testToken, [
    new Address(STELLAR_DEPLOYER.publicKey()).toScVal(),
    nativeToScVal(TEST_TOKEN_DECIMALS, { type: 'u32' }),
    nativeToScVal('Test USD', { type: 'string' }),
    nativeToScVal(TEST_TOKEN_SYMBOL, { type: 'string' }),
  ]);
  return { adManager, orderPortal, xlm, testToken, deployer: STELLAR_DEPLOYER.publicKey() };
}

/** Mints `amount` (smallest unit) of the test token to `to` (G... or C...), signed by its admin, the deployer. */
export async function mintTestToken(server: rpc.Server, networkPassphrase: string, testToken: string, to: string, amount: bigint): Promise<void> {
  await submitOperation(server, networkPassphrase, STELLAR_DEPLOYER, Operation.invokeContractFunction({
    contract: testToken,
    function: 'mint',
    args: [new Address(to).toScVal(), nativeToScVal(amount, { type: 'i128' })],
  }));
}
