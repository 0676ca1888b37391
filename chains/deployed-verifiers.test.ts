import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifacts as circuitArtifacts } from '../circuits/artifacts.ts';
import { createChains } from './chains.ts';
import { createEvmClient } from './evm/rpc.ts';
import { ConfigError } from '../config/config.ts';
import { loadDevnetArtifacts } from '../contracts/evm/artifacts.ts';
import { compileSolidity } from '../contracts/evm/compile.ts';
import { startAnvil, type AnvilInstance } from '../devnet/anvil.ts';
import { deployBridgeContracts } from '../devnet/deploy.ts';
import { importRegistry } from '../registry/import.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { startSorobanTestNetwork, type SorobanTestNetwork } from '../test/support/soroban-network.ts';
import { startRpcFaultProxy } from '../test/support/rpc-fault-proxy.ts';
import { eventually } from '../test/support/devnet-client.ts';
import { checkDeployedVerifiers, codeHoldsKey, verifierDifferences, type VerifierChain } from './deployed-verifiers.ts';
import type { VerificationKeyJson } from '../circuits/verification-key.ts';

/**
 * Production's refusal of a proving key it cannot trust, and of a chain whose deployed verifier is
 * not that key's: on two anvil chains (one deployed with the committed Verifier.sol, one with a
 * verifier of another key) and the local Soroban network (the contracts' wasm, whose
 * `verification_key` view returns the key compiled in), then through the prover process itself.
 */
const logger = pino({ level: 'silent' });
const vk = JSON.parse(await readFile(circuitArtifacts.verificationKey, 'utf8')) as VerificationKeyJson;
const vkSha256 = JSON.parse(await readFile(circuitArtifacts.manifest, 'utf8')).ceremony.vkSha256 as string;
/** The committed key with one IC point's x moved: another key's verification key, as far as any check can tell. */
const otherVk: VerificationKeyJson = { ...vk, IC: vk.IC.map((p, i) => (i === 0 ? [(BigInt(p[0]!) + 1n).toString(), p[1]!, p[2]!] : p)) };

describe('deployed verifiers against the proving key', () => {
  let scratch: string;
  let anvilA: AnvilInstance;
  let anvilB: AnvilInstance;
  let soroban: SorobanTestNetwork;
  let db: TestDatabase;
  let chainA: VerifierChain;
  let chainB: VerifierChain;
  let stellar: VerifierChain;
  const chains = createChains();

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'verifiers-'));
    [anvilA, anvilB, soroban] = await Promise.all([startAnvil({ chainId: 41_001 }), startAnvil({ chainId: 41_002 }), startSorobanTestNetwork()]);
    const devnetArtifacts = await loadDevnetArtifacts();
    // Chain B's verifier: the committed Verifier.sol with IC0x changed, i.e. a verifier of another key.
    const source = await readFile(circuitArtifacts.verifierSol, 'utf8');
    await writeFile(join(scratch, 'Verifier.sol'), source.replace(/(IC0x = )(\d+)/, (_, head: string, value: string) => `${head}${BigInt(value) + 1n}`));
    const other = (await compileSolidity(['Verifier.sol'], { baseDir: scratch, cacheDir: join(scratch, 'solc') })).Groth16Verifier!;
    const relayer = Wallet.createRandom().address;
    const domain = { name: 'ProofBridge', version: '1' };
    const [a, b] = await Promise.all([
      deployBridgeContracts({ rpcUrl: anvilA.rpcUrl, artifacts: devnetArtifacts, relayer, domain, mintPerAccount: 1n }),
      deployBridgeContracts({ rpcUrl: anvilB.rpcUrl, artifacts: { ...devnetArtifacts, verifier: { abi: other.abi, bytecode: other.bytecode } }, relayer, domain, mintPerAccount: 1n }),
    ]);
    chainA = { chainId: '41001', name: 'Chain A', kind: 'EVM', adManagerAddress: a.adManager, orderPortalAddress: a.orderPortal, rpcUrl: anvilA.rpcUrl };
    chainB = { chainId: '41002', name: 'Chain B', kind: 'EVM', adManagerAddress: b.adManager, orderPortalAddress: b.orderPortal, rpcUrl: anvilB.rpcUrl };
    stellar = {
      chainId: '148', name: 'Stellar', kind: 'STELLAR', adManagerAddress: soroban.deployment.adManager, orderPortalAddress: soroban.deployment.orderPortal, rpcUrl: soroban.node.rpcUrl,
    };
    db = await createTestDatabase();
  }, 300_000);

  afterAll(async () => {
    await Promise.all([anvilA?.stop(), anvilB?.stop(), soroban?.stop(), db?.drop()]);
    await rm(scratch, { recursive: true, force: true });
  });

  it('accepts chains whose verifiers are the proving key\'s: EVM by the verifier\'s code, Soroban by the contracts\' verification_key', async () => {
    expect(await verifierDifferences(chainA, vk, chains)).toEqual([]);
    expect(await verifierDifferences(stellar, vk, chains)).toEqual([]);
    await expect(checkDeployedVerifiers([chainA, stellar], vk, vkSha256, chains, logger)).resolves.toBeUndefined();
  });

  it('does not stop start-up for a chain it cannot read: checks it again until it can, then refuses a verifier of another key', async () => {
    const proxy = await startRpcFaultProxy(anvilB.rpcUrl, { mode: 'down' });
    try {
      const refusals: ConfigError[] = [];
      const behind = { ...chainB, rpcUrl: proxy.url };
      await expect(checkDeployedVerifiers([chainA, behind], vk, vkSha256, chains, logger, { recheckMs: 50, onLateRefusal: (e) => refusals.push(e) }))
        .resolves.toBeUndefined();
      proxy.mode = 'honest';
      await eventually('the late refusal', async () => refusals.length, (n) => n > 0, 60_000);
      expect(refusals[0]!.message).toMatch(/chain Chain B \(41002\): AdManager /);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a chain whose deployed verifier is another key\'s, naming the chain and both contracts', async () => {
    const differences = await verifierDifferences(chainB, vk, chains);
    expect(differences).toEqual([
      expect.stringMatching(new RegExp(`^AdManager ${chainB.adManagerAddress} checks proofs with verifier 0x[0-9a-f]{40}, whose code is not this key's verifier$`)),
      expect.stringMatching(new RegExp(`^OrderPortal ${chainB.orderPortalAddress} checks proofs with verifier`)),
    ]);
    const refusal = checkDeployedVerifiers([chainA, chainB, stellar], vk, vkSha256, chains, logger);
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refusal).rejects.toThrow(/refusing to serve:\n {2}chain Chain B \(41002\): AdManager .*\n {2}chain Chain B \(41002\): OrderPortal/);
    await expect(refusal).rejects.not.toThrow(/Chain A|Stellar/);
  });

  it('refuses every chain when the proving key is another: the EVM verifier lacks its constants, the Soroban contracts hold another key', async () => {
    expect(await verifierDifferences(chainA, otherVk, chains)).toHaveLength(2);
    expect(await verifierDifferences(stellar, otherVk, chains)).toEqual([
      `AdManager ${stellar.adManagerAddress} holds another verification key`,
      `OrderPortal ${stellar.orderPortalAddress} holds another verification key`,
    ]);
    const code = await createEvmClient(anvilA.rpcUrl).eth.getCode(String((await createEvmClient(anvilA.rpcUrl).eth.call({ to: chainA.adManagerAddress, data: '0x2b7ac3f3' }))).replace(/^0x0{24}/, '0x'));
    expect(codeHoldsKey(String(code), vk)).toBe(true);
    expect(codeHoldsKey(String(code), otherVk)).toBe(false);
  });

  describe('the prover process in production', () => {
    const productionEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
      PATH: process.env.PATH ?? '', NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', LOG_LEVEL: 'info', DATA_DIR: scratch,
      DATABASE_URL: 'postgres://127.0.0.1:1/never', TEMPORAL_ADDRESS: '127.0.0.1:1', METRICS_PORT: '0', HOST: '127.0.0.1',
      SIWE_DOMAIN: 'relayer.example.org', SIWE_URI: 'https://relayer.example.org', SEP10_HOME_DOMAIN: 'relayer.example.org', SEP10_WEB_AUTH_DOMAIN: 'relayer.example.org',
      PROVER_POOL_SIZE: '1',
      ...extra,
    });
    /** The api's own secrets: the worker and prover hold none (a production one given any exits 78, config/secrets.ts). */
    const apiSecrets = () => ({
      JWT_SECRET: randomBytes(32).toString('hex'), RELAYER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey,
      RELAYER_STELLAR_SECRET: Keypair.random().secret(), SEP10_SIGNING_SECRET: Keypair.random().secret(),
    });
    const prover = (env: Record<string, string>) => spawnSync(process.execPath, ['--import', 'tsx', 'entrypoints/prover-main.ts'], { env, encoding: 'utf8', timeout: 90_000 });

    it.each(['prover', 'worker', 'api'])('the %s process exits 78 naming the proving key when its ceremony has no transcript (a development key)', (name) => {
      const run = spawnSync(process.execPath, ['--import', 'tsx', `entrypoints/${name}-main.ts`], { env: productionEnv({ PROVING_KEY_VK_SHA256: vkSha256, ...(name === 'api' ? apiSecrets() : {}) }), encoding: 'utf8', timeout: 90_000 });
      expect(run.status).toBe(78);
      expect(run.stderr).toMatch(/proving key circuits\/build\/deposit_final\.zkey: its ceremony does not verify, so whoever made its randomness may forge proofs: no ceremony transcript/);
    });

    it('exits 78 without PROVING_KEY_VK_SHA256, and naming the key when its verification key hashes to another value', () => {
      const unset = prover(productionEnv({ PROVING_KEY_ALLOW_DEVELOPMENT: 'true' }));
      expect(unset.status).toBe(78);
      expect(unset.stderr).toMatch(/PROVING_KEY_VK_SHA256: required in production/);
      const wrong = prover(productionEnv({ PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVING_KEY_VK_SHA256: 'ab'.repeat(32) }));
      expect(wrong.status).toBe(78);
      expect(wrong.stderr).toMatch(new RegExp(`proving key circuits/build/deposit_final\\.zkey: its verification key hashes to ${vkSha256}, not PROVING_KEY_VK_SHA256 ${'ab'.repeat(32)}`));
    });

    it('exits 78 naming a registered chain whose verifier is not the key\'s; with only matching chains it goes on starting', async () => {
      await importRegistry(db.knex, { chains: [chainA, chainB, stellar].map(({ rpcUrl, ...chain }) => ({ ...chain, rpcUrl, confirmations: 1, ...(chain.kind === 'STELLAR' ? { networkPassphrase: soroban.passphrase } : {}) })) });
      const env = productionEnv({ PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVING_KEY_VK_SHA256: vkSha256, DATABASE_URL: db.url });
      const refused = prover(env);
      expect(refused.status).toBe(78);
      expect(refused.stderr).toMatch(/refusing to serve:\n {2}chain Chain B \(41002\): AdManager/);

      await db.knex('chains').where({ chain_id: '41002' }).delete();
      // Past the check the process goes on to its Temporal server (none here): the log says the verifiers matched.
      const child = spawn(process.execPath, ['--import', 'tsx', 'entrypoints/prover-main.ts'], { env });
      let output = '';
      const matched = await new Promise<boolean>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('deployed verifiers match the proving key')) resolve(true);
        });
        child.on('exit', () => resolve(output.includes('deployed verifiers match the proving key')));
      });
      child.kill('SIGKILL');
      expect(matched, output).toBe(true);
      expect(output).toMatch(/PROVING_KEY_ALLOW_DEVELOPMENT: proving with a development key/);
    }, 180_000);
  });
});
