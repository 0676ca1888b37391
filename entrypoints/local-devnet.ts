import path from 'node:path';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { rpc } from '@stellar/stellar-sdk';
import { startDevnet, startStellarDevnet, type Devnet } from '../devnet/index.ts';
import { STELLAR_DEVNET_CHAIN_ID, STELLAR_DEVNET_NAME, withStellarDevnet } from '../devnet/registry-file.ts';
import { buildStellarDevnet, buildStellarDevnetInBackground, stellarDevnetBuilt } from '../devnet/stellar/build.ts';
import type { StellarNode } from '../devnet/stellar/node.ts';
import { fund } from '../devnet/stellar/client.ts';
import { mintTestToken } from '../devnet/stellar/deploy.ts';
import { RegistryCache } from '../db/repositories/registry-cache.ts';
import { importRegistry } from '../registry/import.ts';
import type { RelayerSigner } from '../chains/signers.ts';
import { ChainJoin } from './chain-join.ts';
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
 *
 * With `stellarJoin` the Stellar network does not hold the start up: the EVM chains are started and
 * registered, and the network is built (cargo, first start only), started, deployed and registered
 * in the background, `stellarJoin` following its state; the returned devnet gains its `stellar`
 * and RPC URL when it joined. Without it, the network is built and started before this resolves.
 */
export async function startLocalDevnet(
  config: Config, signer: RelayerSigner, knex: Knex, logger: Logger, options: { stellarJoin?: ChainJoin } = {},
): Promise<Devnet | undefined> {
  const withStellar = config.STELLAR_DEVNET === 'on';
  const { stellarJoin } = options;
  const domain = { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION };
  const stateDir = path.join(config.DATA_DIR, 'devnet');
  let devnet: Devnet;
  try {
    // The Stellar network's binary and the contracts' wasm come from cargo (minutes the first time).
    if (withStellar && !stellarJoin && !stellarDevnetBuilt()) {
      logger.info('building the local Stellar network and the Soroban contracts (cargo; first start only, a few minutes)');
      const started = performance.now();
      // Cargo's progress on stderr; stdout stays the log's.
      buildStellarDevnet({ quiet: true });
      logger.info({ buildSeconds: secondsSince(started) }, `local Stellar network built in ${secondsSince(started)} s (later starts reuse it)`);
    }
    devnet = await startDevnet({
      ports: [config.DEVNET_PORT_A, config.DEVNET_PORT_B],
      relayerEvmAddress: await signer.evmAddress(),
      domain,
      stateDir,
      stellar: withStellar && !stellarJoin ? { relayer: await signer.stellarPublicKey(), port: config.STELLAR_DEVNET_PORT } : undefined,
    });
  } catch (error) {
    if (config.DEVNET === 'on') throw error;
    logger.warn({ err: error }, 'local devnet not started (DEVNET=auto); the registry keeps its chains as they are');
    return undefined;
  }
  try {
    if (devnet.stellar) await fundStellarDevAccount(devnet.stellar.node.rpcUrl, devnet.stellar.node.networkPassphrase, devnet.stellar.deployment.testToken);
    await register(knex, devnet, logger);
  } catch (error) {
    await devnet.stop();
    throw error;
  }
  if (!withStellar || !stellarJoin) return devnet;
  // Until it joined, the address the registry holds for chain 148 reaches no network of ours.
  stellarJoin.hold((await new RegistryCache(knex).chain(STELLAR_DEVNET_CHAIN_ID))?.rpcUrl);
  return joinInBackground(devnet, stellarJoin, { relayer: await signer.stellarPublicKey(), domain, port: config.STELLAR_DEVNET_PORT, stateDir, knex, logger });
}

/** Imports the devnet's registry (chains, tokens, routes) and logs what it runs and changed. */
async function register(knex: Knex, devnet: Devnet, logger: Logger): Promise<void> {
  const report = await importRegistry(knex, devnet.registry);
  for (const [chainId, rpcUrl] of Object.entries(devnet.rpcUrls)) logger.info({ chainId, rpcUrl }, 'devnet chain running');
  if (report.changes.length > 0) logger.info({ changes: report.changes }, 'devnet registered');
}

interface JoinContext {
  relayer: string;
  domain: { name: string; version: string };
  port: number;
  stateDir: string;
  knex: Knex;
  logger: Logger;
}

/**
 * `devnet` with the local Stellar network joining it in the background (build, start, deploy, fund
 * the dev account, register), `join` following each step; its `stop` cancels a build under way and
 * stops the network with the EVM chains. A failed join leaves the service serving the EVM chains,
 * the failure on `/health` and in the log.
 */
function joinInBackground(devnet: Devnet, join: ChainJoin, context: JoinContext): Devnet {
  const { logger } = context;
  const cancel = new AbortController();
  let node: StellarNode | undefined;
  const started = performance.now();
  const joining = (async () => {
    if (!stellarDevnetBuilt()) {
      join.enter('building', 'cargo builds the network and the Soroban contracts (first start only, a few minutes)');
      logger.info(`chain ${join.chainId} (${join.name}): building the local Stellar network and the Soroban contracts (cargo, progress below; ` +
        'first start only, a few minutes); the EVM chains and the API serve meanwhile, GET /health shows its state');
      const building = performance.now();
      await buildStellarDevnetInBackground(cancel.signal);
      logger.info({ buildSeconds: secondsSince(building) }, `local Stellar network built in ${secondsSince(building)} s (later starts reuse it)`);
    }
    join.enter('starting', 'starting the network and deploying the Soroban contracts');
    logger.info(`chain ${join.chainId} (${join.name}): starting the local Stellar network and deploying the Soroban contracts`);
    const stellar = await startStellarDevnet({ relayer: context.relayer, domain: context.domain, port: context.port, stateDir: context.stateDir });
    node = stellar.node;
    if (cancel.signal.aborted) return;
    await fundStellarDevAccount(stellar.node.rpcUrl, stellar.node.networkPassphrase, stellar.deployment.testToken);
    const { rpcUrl, networkPassphrase } = stellar.node;
    const registry = withStellarDevnet(devnet.registry, { rpcUrl, networkPassphrase, deployment: stellar.deployment });
    await importRegistry(context.knex, registry);
    Object.assign(devnet, { registry, stellar, rpcUrls: { ...devnet.rpcUrls, [join.chainId]: stellar.node.rpcUrl } });
    const seconds = secondsSince(started);
    join.joinedAt(stellar.node.rpcUrl, `joined in ${seconds} s`);
    logger.info({ chainId: join.chainId, rpcUrl: stellar.node.rpcUrl, networkPassphrase: stellar.node.networkPassphrase, joinSeconds: seconds },
      `chain ${join.chainId} (${join.name}) joined in ${seconds} s: RPC ${stellar.node.rpcUrl}, Stellar network passphrase ` +
      `"${stellar.node.networkPassphrase}", dev account ${STELLAR_DEV_ACCOUNT.publicKey()} secret ${STELLAR_DEV_ACCOUNT.secret()} ` +
      '(10 000 XLM, 1 000 000 TUSD)');
  })().catch((error: unknown) => {
    if (cancel.signal.aborted) return;
    join.enter('failed', (error as Error).message.split('\n')[0]);
    logger.error({ err: error }, `chain ${join.chainId} (${join.name}) could not join: the EVM chains go on; fix the cause and start again`);
  });
  const stopEvm = devnet.stop;
  return Object.assign(devnet, {
    async stop() {
      cancel.abort();
      await joining;
      await node?.stop();
      await stopEvm();
    },
  });
}

function secondsSince(started: number): number {
  return Math.round((performance.now() - started) / 100) / 10;
}

/** The local Stellar network's join, before it starts: `startLocalDevnet`'s `stellarJoin`. */
export function stellarJoin(): ChainJoin {
  return new ChainJoin(STELLAR_DEVNET_CHAIN_ID, STELLAR_DEVNET_NAME, 'starting');
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
