import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { rpc } from '@stellar/stellar-sdk';
import { startDevnet, type Devnet } from '../devnet/index.ts';
import { buildStellarDevnet, stellarDevnetBuilt } from '../devnet/stellar/build.ts';
import { fund } from '../devnet/stellar/client.ts';
import { mintTestToken } from '../devnet/stellar/deploy.ts';
import { importRegistry } from '../registry/import.ts';
import type { RelayerSigner } from '../chains/signers.ts';
import { STELLAR_DEV_ACCOUNT } from './dev-accounts.ts';

/** Test tokens the Stellar dev account gets when it is created: 1 000 000 TUSD (7 decimals), as anvil's accounts hold. */
const STELLAR_DEV_TUSD = 1_000_000n * 10n ** 7n;

/**
 * Starts the devnet for a local run, so a newcomer can run a whole trade with no outside chain:
 * anvil 31337 and 31338 and the local Stellar network (148, devnet/stellar: the Soroban contracts
 * as wasm, native XLM and a SEP-41 test token) with the contracts trusting this service's relayer keys (in memory or in an HSM),
 * their state kept in DATA_DIR/devnet across restarts, and registered (chains, tokens, routes)
 * through the same import operators use. On the Stellar network `STELLAR_DEV_ACCOUNT` holds
 * 10 000 XLM and 1 000 000 TUSD (given once, when the ledger does not know it). When a port is
 * taken and DEVNET is `auto` (someone runs `npm run devnet` already, say), the service goes on
 * without starting its own.
 */
export async function startLocalDevnet(
  config: Config,
  signer: RelayerSigner,
  knex: Knex,
  logger: Logger,
  keeper?: RelayerSigner,
): Promise<Devnet | undefined> {
  let devnet: Devnet;
  try {
    // The Stellar network's binary and the contracts' wasm come from cargo (minutes the first time).
    const withStellar = config.STELLAR_DEVNET === 'on';
    if (withStellar && !stellarDevnetBuilt()) {
      logger.info('building the local Stellar network and the Soroban contracts (cargo; first start only, a few minutes)');
      const started = performance.now();
      // Cargo's progress on stderr; stdout stays the log's.
      buildStellarDevnet({ quiet: true });
      const buildSeconds = Math.round((performance.now() - started) / 100) / 10;
      logger.info({ buildSeconds }, `local Stellar network built in ${buildSeconds} s (later starts reuse it)`);
    }
    devnet = await startDevnet({
      ports: [config.DEVNET_PORT_A, config.DEVNET_PORT_B],
      relayerEvmAddress: await signer.evmAddress(),
      domain: { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION },
      stateDir: path.join(config.DATA_DIR, 'devnet'),
      stellar: withStellar ? { relayer: await signer.stellarPublicKey(), port: config.STELLAR_DEVNET_PORT } : undefined,
    });
  } catch (error) {
    if (config.DEVNET === 'on') throw error;
    logger.warn({ err: error }, 'local devnet not started (DEVNET=auto); the registry keeps its chains as they are');
    return undefined;
  }
  try {
    if (devnet.stellar) await fundStellarDevAccount(devnet.stellar.node.rpcUrl, devnet.stellar.node.networkPassphrase, devnet.stellar.deployment.testToken);
    if (keeper) await fundKeeper(devnet, keeper, logger);
    const report = await importRegistry(knex, devnet.registry);
    for (const [chainId, rpcUrl] of Object.entries(devnet.rpcUrls)) logger.info({ chainId, rpcUrl }, 'devnet chain running');
    if (report.changes.length > 0) logger.info({ changes: report.changes }, 'devnet registered');
  } catch (error) {
    await devnet.stop();
    throw error;
  }
  return devnet;
}

/** The keeper's gas on each devnet chain: 1 000 ETH on an anvil chain holding none, 10 000 XLM (friendbot) on a Stellar network that does not know it. */
const KEEPER_DEVNET_WEI = 1_000n * 10n ** 18n;

/** Gives the keeper's accounts (the worker's, never the relayer's request-signing key) gas on every devnet chain, once. */
async function fundKeeper(devnet: Devnet, keeper: RelayerSigner, logger: Logger): Promise<void> {
  const evmAddress = await keeper.evmAddress();
  for (const [chainId, rpcUrl] of Object.entries(devnet.rpcUrls)) {
    if (devnet.stellar && rpcUrl === devnet.stellar.node.rpcUrl) continue;
    const call = async (method: string, params: unknown[]) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
      const response = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return ((await response.json()) as { result: string }).result;
    };
    if (BigInt(await call('eth_getBalance', [evmAddress, 'latest'])) === 0n) {
      await call('anvil_setBalance', [evmAddress, `0x${KEEPER_DEVNET_WEI.toString(16)}`]);
    }
    logger.info({ chainId, keeper: evmAddress }, 'keeper account funded on the devnet');
  }
  if (devnet.stellar) {
    const stellarAccount = await keeper.stellarPublicKey();
    await fund(new rpc.Server(devnet.stellar.node.rpcUrl, { allowHttp: true }), stellarAccount);
    logger.info({ keeper: stellarAccount }, 'keeper account funded on the Stellar devnet');
  }
}

/** Creates the Stellar dev account (friendbot) and mints it TUSD, once: a ledger that knows it is left as it is. */
async function fundStellarDevAccount(rpcUrl: string, networkPassphrase: string, testToken: string): Promise<void> {
  const server = new rpc.Server(rpcUrl, { allowHttp: true });
  const account = STELLAR_DEV_ACCOUNT.publicKey();
  const known = await server.getAccount(account).then(() => true, () => false);
  if (known) return;
  await fund(server, account);
  await mintTestToken(server, networkPassphrase, testToken, account, STELLAR_DEV_TUSD);
}
