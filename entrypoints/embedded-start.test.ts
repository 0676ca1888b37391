import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair, rpc } from '@stellar/stellar-sdk';
import { JsonRpcProvider, Wallet } from 'ethers';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { anvilAccounts } from '../devnet/index.ts';
import { importRegistry } from '../registry/import.ts';
import { start } from './service.ts';

/** A token an operator registers on chain 148 (no devnet import touches it). */
const OPERATOR_TOKEN = { chainId: '148', symbol: 'OPR', name: 'Operator token', address: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA', decimals: 7, kind: 'SEP41' as const };

describe('the embedded run (npm start with no DATABASE_URL)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-embedded-'));
  // PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const pgPort = String(30000 + Math.floor(Math.random() * 9000));
  const config = () => loadConfig({
    PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: pgPort,
    // Free ports: the default 8545/8546 may be someone's `npm run devnet`.
    DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', METRICS_PORT: '0', STELLAR_DEVNET_PORT: '0',
  });
  const recipient = Wallet.createRandom().address;

  // Two starts; the first deploys the Soroban contracts on the local Stellar network (a ledger per transaction).
  it('starts PostgreSQL and the devnet, registers them, and keeps both across restarts', async () => {
    const first = await start(config(), pino({ level: 'silent' }));
    let portalBefore: string;
    let stellarAdManager: string;
    try {
      // The prover's metrics are on the registry /metrics serves, before any proof was asked for.
      const metrics = await (await fetch(`${first.metricsUrl}/metrics`)).text();
      expect(metrics).toContain('relayer_prover_proofs_total');
      expect(metrics).toContain('relayer_prover_queue_depth 0');
      const chains = await (await fetch(`${first.url}/v1/chains`)).json();
      expect(chains.data.map((c: { chainId: string }) => c.chainId)).toEqual(expect.arrayContaining(['31337', '31338', '148']));
      const chainA = await first.knex('chains').where({ chain_id: '31337' }).first();
      portalBefore = chainA.order_portal_address;
      // The registered RPC URL is the running devnet, and the registered portal is deployed there.
      const provider = new JsonRpcProvider(chainA.rpc_url, undefined, { staticNetwork: true });
      expect(await provider.getCode(chainA.order_portal_address)).not.toBe('0x');
      // The keeper's own accounts were created (DATA_DIR, not the relayer's keys) and given gas on every chain.
      const keeperKeys = JSON.parse(readFileSync(path.join(dataDir, 'keeper-keys.json'), 'utf8')) as { evmPrivateKey: string; stellarSecret: string };
      const keeperAddress = new Wallet(keeperKeys.evmPrivateKey).address;
      expect(await provider.getBalance(keeperAddress)).toBeGreaterThan(0n);
      const chainB = await first.knex('chains').where({ chain_id: '31338' }).first();
      const providerB = new JsonRpcProvider(chainB.rpc_url, undefined, { staticNetwork: true });
      expect(await providerB.getBalance(keeperAddress)).toBeGreaterThan(0n);
      providerB.destroy();
      const payer = new Wallet(anvilAccounts(2)[1]!.privateKey, provider);
      await (await payer.sendTransaction({ to: recipient, value: 12345n })).wait();
      provider.destroy();
      // Chain 148 is the local Stellar network: its RPC is the devnet's, and its contracts are deployed wasm.
      const stellar = await first.knex('chains').where({ chain_id: '148' }).first();
      expect(stellar.rpc_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      stellarAdManager = stellar.ad_manager_address;
      const wasm = await new rpc.Server(stellar.rpc_url, { allowHttp: true }).getContractWasmByContractId(stellar.ad_manager_address);
      expect(wasm.length).toBeGreaterThan(1000);
      const keeperStellar = Keypair.fromSecret(keeperKeys.stellarSecret).publicKey();
      await new rpc.Server(stellar.rpc_url, { allowHttp: true }).getAccount(keeperStellar);
      // An entry only the operator has (the devnet import manages the chains themselves).
      await importRegistry(first.knex, { chains: [], tokens: [OPERATOR_TOKEN], routes: [] });
    } finally {
      await first.stop();
    }

    const second = await start(config(), pino({ level: 'silent' }));
    try {
      // The operator's entry survived the restart and the devnet's registration.
      expect((await second.knex('tokens').where({ address: OPERATOR_TOKEN.address }).first()).name).toBe(OPERATOR_TOKEN.name);
      // The Stellar network kept its ledger: the same contracts, found rather than deployed again.
      expect((await second.knex('chains').where({ chain_id: '148' }).first()).ad_manager_address).toBe(stellarAdManager);
      // The chain kept its state: same contracts, and the transfer made before the restart.
      const chainA = await second.knex('chains').where({ chain_id: '31337' }).first();
      expect(chainA.order_portal_address).toBe(portalBefore);
      const provider = new JsonRpcProvider(chainA.rpc_url, undefined, { staticNetwork: true });
      expect(await provider.getBalance(recipient)).toBe(12345n);
      expect(await provider.getCode(chainA.order_portal_address)).not.toBe('0x');
      provider.destroy();
    } finally {
      await second.stop();
    }
  }, 180_000);
});
