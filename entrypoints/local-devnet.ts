import path from 'node:path';
import { computeAddress, SigningKey } from 'ethers';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { Keypair } from '@stellar/stellar-sdk';
import { startDevnet, type Devnet } from '../devnet/index.ts';
import { buildStellarDevnet, stellarDevnetBuilt } from '../devnet/stellar/build.ts';
import { importRegistry } from '../registry/import.ts';
import type { Secrets } from '../config/secrets.ts';

/**
 * Starts the devnet for a local run, so a newcomer can run a whole trade with no outside chain:
 * anvil 31337 and 31338 and the local Stellar network (148, devnet/stellar: the Soroban contracts
 * as wasm, native XLM and a SEP-41 test token) with the contracts trusting this service's relayer keys,
 * their state kept in DATA_DIR/devnet across restarts, and registered (chains, tokens, routes)
 * through the same import operators use. When a port is taken and DEVNET is `auto` (someone runs
 * `npm run devnet` already, say), the service goes on without starting its own.
 */
export async function startLocalDevnet(config: Config, secrets: Secrets, knex: Knex, logger: Logger): Promise<Devnet | undefined> {
  let devnet: Devnet;
  try {
    // The Stellar network's binary and the contracts' wasm come from cargo (minutes the first time).
    const withStellar = config.STELLAR_DEVNET === 'on';
    if (withStellar && !stellarDevnetBuilt()) {
      logger.info('building the local Stellar network and the Soroban contracts (cargo; first time only)');
      buildStellarDevnet();
    }
    devnet = await startDevnet({
      ports: [config.DEVNET_PORT_A, config.DEVNET_PORT_B],
      relayerEvmAddress: computeAddress(new SigningKey(secrets.relayerEvmPrivateKey).publicKey),
      domain: { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION },
      stateDir: path.join(config.DATA_DIR, 'devnet'),
      stellar: withStellar ? { relayer: Keypair.fromSecret(secrets.relayerStellarSecret).publicKey(), port: config.STELLAR_DEVNET_PORT } : undefined,
    });
  } catch (error) {
    if (config.DEVNET === 'on') throw error;
    logger.warn({ err: error }, 'local devnet not started (DEVNET=auto); the registry keeps its chains as they are');
    return undefined;
  }
  try {
    const report = await importRegistry(knex, devnet.registry);
    for (const [chainId, rpcUrl] of Object.entries(devnet.rpcUrls)) logger.info({ chainId, rpcUrl }, 'devnet chain running');
    if (report.changes.length > 0) logger.info({ changes: report.changes }, 'devnet registered');
  } catch (error) {
    await devnet.stop();
    throw error;
  }
  return devnet;
}
