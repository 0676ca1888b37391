import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The package as a release: `npm pack` in client/ makes a tarball that an empty project installs
 * (with the peer dependencies a dApp brings: ethers for ./evm, @stellar/stellar-sdk for ./stellar)
 * and imports every entry of, from plain Node. npm reads its cache first (`--prefer-offline`):
 * the repository's own install put these versions there.
 */

const run = promisify(execFile);
const CLIENT_DIR = path.join(import.meta.dirname);
const work = mkdtempSync(path.join(tmpdir(), 'relayer-client-pack-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed client package', () => {
  it('packs with its licence, README and generated entries only, installs in an empty project and imports ., ./evm, ./stellar, ./order, ./events, ./flows and ./execute', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: CLIENT_DIR });
    const [packed] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
    const files = packed.files.map((file) => file.path).sort();
    expect(files).toEqual(['LICENSE', 'README.md', 'events.d.ts', 'events.js', 'evm.d.ts', 'execute.d.ts', 'execute.js', 'flows.d.ts', 'flows.js', 'evm.js', 'index.d.ts', 'index.js', 'openapi.json',
      'order.d.ts', 'order.js', 'package.json', 'schema.d.ts', 'stellar.d.ts', 'stellar.js'].sort());

    const project = path.join(work, 'dapp');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'empty-dapp', version: '0.0.0', private: true, type: 'module' }));
    const versionOf = (name: string) => (JSON.parse(readFileSync(path.join(CLIENT_DIR, '..', 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    const [ethers, stellarSdk] = [versionOf('ethers'), versionOf('@stellar/stellar-sdk')];
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error',
      path.join(work, packed.filename), `ethers@${ethers}`, `@stellar/stellar-sdk@${stellarSdk}`], { cwd: project, maxBuffer: 16 * 1024 * 1024, timeout: 240_000 });

    writeFileSync(path.join(project, 'check.mjs'), `
      const root = await import('@cross-chain-relayer/client');
      const evm = await import('@cross-chain-relayer/client/evm');
      const stellar = await import('@cross-chain-relayer/client/stellar');
      const order = await import('@cross-chain-relayer/client/order');
      const events = await import('@cross-chain-relayer/client/events');
      const flows = await import('@cross-chain-relayer/client/flows');
      const execute = await import('@cross-chain-relayer/client/execute');
      const kinds = (module) => Object.fromEntries(Object.entries(module).map(([name, value]) => [name, typeof value]).sort());
      console.log(JSON.stringify({ root: kinds(root), evm: kinds(evm), stellar: kinds(stellar), order: kinds(order), events: kinds(events), flows: kinds(flows), execute: kinds(execute) }));
    `);
    const { stdout: imported } = await run('node', ['check.mjs'], { cwd: project });
    const entries = JSON.parse(imported) as Record<string, Record<string, string>>;
    expect(entries.root).toMatchObject({ createRelayerClient: 'function', followTrade: 'function', followEvents: 'function', EVENT_STREAM_PATHS: 'object' });
    expect(entries.evm).toMatchObject({ erc20ApproveTransaction: 'function', evmTransaction: 'function', evmTimeoutTransaction: 'function', adManagerAbi: 'object', orderPortalAbi: 'object' });
    expect(entries.stellar).toEqual({
      authorizeWithWallet: 'function', sendStellarTransaction: 'function', sep53Digest: 'function', signUnlockMessage: 'function', stellarOperation: 'function', stellarTimeoutOperation: 'function',
      stellarTransaction: 'function', stellarTransactionWithFeePayer: 'function', unlockMessage: 'function',
    });
    expect(entries.order).toMatchObject({ orderHashOf: 'function', DEFAULT_ORDER_DOMAIN: 'object' });
    expect(entries.events).toMatchObject({ followTrade: 'function', followEvents: 'function', isTerminalEvent: 'function', StreamError: 'function' });
    expect(entries.flows).toMatchObject({ unlockMessage: 'function', confirmUntilFinal: 'function', refreshingFetch: 'function', sendAndWait: 'function', signInWithEthereum: 'function', signInWithStellar: 'function' });
    expect(entries.execute).toEqual({
      NotTheBridgerError: 'function', eip1193Wallet: 'function', ethersWallet: 'function', executeTrade: 'function', fileTradeStore: 'function',
      freighterWallet: 'function', keypairWallet: 'function', localStorageTradeStore: 'function', memoryTradeStore: 'function', resumeTrade: 'function',
      retryingFetch: 'function',
    });
    expect(entries.root).toMatchObject({ confirmUntilFinal: 'function', refreshingFetch: 'function', sendAndWait: 'function', signInWithEthereum: 'function', signInWithStellar: 'function' });
  }, 300_000);
});
