import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { anvilAccounts, mergeRegistry, startDevnet, type RegistryFile } from './index.ts';

/**
 * `npm run devnet [-- --out FILE] [--port-a N] [--port-b N]`: starts the two-chain devnet, writes
 * its part of the registry file (other entries of the file are kept) and runs until Ctrl-C.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'devnet/registry.json' },
      'port-a': { type: 'string', default: '8545' },
      'port-b': { type: 'string', default: '8546' },
    },
  });
  const devnet = await startDevnet({ ports: [Number(values['port-a']), Number(values['port-b'])] });
  const out = path.resolve(values.out!);
  const existing: RegistryFile = existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : { chains: [], tokens: [], routes: [] };
  writeFileSync(out, `${JSON.stringify(mergeRegistry(existing, devnet.registry), null, 2)}\n`);

  for (const [chainId, deployment] of Object.entries(devnet.deployments)) {
    console.log(`chain ${chainId} at ${devnet.rpcUrls[chainId]}`);
    console.log(`  AdManager   ${deployment.adManager}`);
    console.log(`  OrderPortal ${deployment.orderPortal}`);
    console.log(`  TUSD        ${deployment.testErc20}`);
    console.log(`  verifier    ${deployment.verifier ?? 'not deployed (circuits/build/Verifier.sol missing): unlocks revert'}`);
  }
  console.log(`registry written to ${out}`);
  console.log('funded dev accounts (10 000 ETH and 1 000 000 TUSD each on both chains; public keys, devnet only):');
  for (const account of anvilAccounts(3)) console.log(`  ${account.address}  ${account.privateKey}`);
  console.log('Ctrl-C stops both chains.');

  const shutdown = async () => {
    await devnet.stop();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
