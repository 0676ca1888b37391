import path from 'node:path';
import { computeAddress, SigningKey } from 'ethers';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { startDevnet, type Devnet } from '../devnet/index.ts';
import { importRegistry } from '../registry/import.ts';
import type { Secrets } from '../config/secrets.ts';

/**
 * Starts the two-chain devnet for a local run, so a newcomer can run a whole trade with no outside
 * chain: anvil 31337 and 31338 with the reference contracts trusting this service's relayer key,
 * their state kept in DATA_DIR/devnet across restarts, and registered (chains, tokens, routes)
 * through the same import operators use. When a port is taken and DEVNET is `auto` (someone runs
 * `npm run devnet` already, say), the service goes on without starting its own.
 */
export async function startLocalDevnet(config: Config, secrets: Secrets, knex: Knex, logger: Logger): Promise<Devnet | undefined> {
  let devnet: Devnet;
  try {
    devnet = await startDevnet({
      ports: [config.DEVNET_PORT_A, config.DEVNET_PORT_B],
      relayerEvmAddress: computeAddress(new SigningKey(secrets.relayerEvmPrivateKey).publicKey),
      domain: { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION },
      stateDir: path.join(config.DATA_DIR, 'devnet'),
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
