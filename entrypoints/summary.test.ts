import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anvilAccounts } from '../devnet/accounts.ts';
import { STELLAR_DEVNET_PASSPHRASE } from '../devnet/stellar/node.ts';
import { createProcessLogger, prettyLogs } from './logger.ts';
import { STELLAR_DEV_ACCOUNT } from './dev-accounts.ts';
import { announceReady } from './process.ts';
import { renderStartupSummary, startupSummary, type SummarySource } from './summary.ts';

/** A running embedded service as `start` returns it, with the devnet's three chains on their default ports. */
const running: SummarySource = {
  url: 'http://127.0.0.1:3000',
  embeddedDatabase: true,
  config: { DATA_DIR: './.data' },
  proverBackend: { backend: 'native', binary: '/repo/target/prover/relayer-groth16', reason: 'PROVER_BACKEND=auto and the native prover is built' },
  devnet: {
    rpcUrls: { 31337: 'http://127.0.0.1:8545', 31338: 'http://127.0.0.1:8546', 148: 'http://127.0.0.1:8000' },
    deployments: { 31337: { testErc20: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0' }, 31338: { testErc20: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0' } },
    registry: { chains: [{ chainId: '31337', name: 'Devnet A' }, { chainId: '31338', name: 'Devnet B' }, { chainId: '148', name: 'Stellar Devnet' }] },
    stellar: { node: { rpcUrl: 'http://127.0.0.1:8000', networkPassphrase: STELLAR_DEVNET_PASSPHRASE } },
  },
};

describe('the start-up summary a person reads at the terminal', () => {
  const evmDev = anvilAccounts(2)[1]!;

  it('names the API and docs, each chain with its RPC URL, network and a funded dev account with how to get more, the data and how to reset', () => {
    const lines = renderStartupSummary(startupSummary(running));
    const text = lines.join('\n');
    expect(text).toContain('API        http://127.0.0.1:3000');
    expect(text).toContain('Docs       http://127.0.0.1:3000/docs');
    expect(text).toContain('Proofs     native prover (/repo/target/prover/relayer-groth16)');
    for (const [chainId, port] of [['31337', 8545], ['31338', 8546]] as const) {
      const line = lines.findIndex((l) => l.trim().startsWith(`${chainId} `));
      expect(lines[line]).toContain(`RPC http://127.0.0.1:${port}, EVM chain id ${chainId}`);
      expect(lines[line + 1]).toContain(`dev account ${evmDev.address}  secret ${evmDev.privateKey}  (10 000 ETH, 1 000 000 TUSD)`);
      expect(lines[line + 2]).toMatch(/more: .*anvil_setBalance.*mint\(address,uint256\) on 0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0/);
    }
    const stellar = lines.findIndex((l) => l.trim().startsWith('148 '));
    expect(lines[stellar]).toContain(`Stellar Devnet: RPC http://127.0.0.1:8000, Stellar network passphrase "${STELLAR_DEVNET_PASSPHRASE}"`);
    expect(lines[stellar + 1]).toContain(`dev account ${STELLAR_DEV_ACCOUNT.publicKey()}  secret ${STELLAR_DEV_ACCOUNT.secret()}  (10 000 XLM, 1 000 000 TUSD)`);
    expect(lines[stellar + 2]).toContain("more: the friendbot gives any new account 10 000 XLM: curl 'http://127.0.0.1:8000/friendbot?addr=");
    const dataDir = path.resolve('./.data');
    expect(text).toContain(`Data       ${dataDir}  (PostgreSQL in pg/`);
    expect(text).toContain(`Reset      stop (Ctrl-C), delete ${dataDir}, start again`);
    expect(text).toContain('Stop       Ctrl-C');
  });

  it('says so when the process runs no devnet and keeps no data of its own, and names the metrics and a snarkjs prover', () => {
    const text = renderStartupSummary(startupSummary({
      ...running, devnet: undefined, embeddedDatabase: false, metricsUrl: 'http://127.0.0.1:9464',
      proverBackend: { backend: 'snarkjs', reason: 'PROVER_BACKEND=auto and the native prover is not built (cargo is not installed): proving with snarkjs' },
    })).join('\n');
    expect(text).toContain('Chains     no local devnet in this process: the registered chains are at GET /v1/chains');
    expect(text).toContain('Metrics    http://127.0.0.1:9464/metrics');
    expect(text).toContain('Proofs     snarkjs (PROVER_BACKEND=auto and the native prover is not built (cargo is not installed)');
    expect(text).not.toContain('Data ');
    expect(text).not.toContain('Reset ');
  });

  it('says snarkjs proves until the native prover being built takes over, and where to follow it', () => {
    const building: SummarySource = {
      ...running,
      proverBackend: { backend: 'snarkjs', reason: 'PROVER_BACKEND=auto and the native prover is not built (it is being built): proving with snarkjs' },
      proverStatus: () => ({ backend: 'snarkjs', state: 'building', seconds: 3 }),
    };
    expect(renderStartupSummary(startupSummary(building))).toContain('  Proofs     snarkjs until the native prover is built (cargo builds it now, first start only; ' +
      'native proofs take over then, the log says when; its state: http://127.0.0.1:3000/health)');
  });

  it('names the Node it runs on, and a chain still joining with its state and where to follow it', () => {
    const joining: SummarySource = {
      ...running,
      devnet: { ...running.devnet!, rpcUrls: { 31337: 'http://127.0.0.1:8545', 31338: 'http://127.0.0.1:8546' }, stellar: undefined },
      devnetChains: () => [
        { chainId: '31337', name: 'Devnet A', state: 'ready', seconds: 0 },
        { chainId: '148', name: 'Stellar Devnet', state: 'building', detail: 'cargo', seconds: 12 },
      ],
    };
    const lines = renderStartupSummary(startupSummary(joining));
    expect(lines).toContain(`  Node       ${process.version} (${process.execPath})`);
    expect(lines).toContain('    148    Stellar Devnet: building; it joins when ready, the log says when (its state: http://127.0.0.1:3000/health)');
    expect(lines.filter((line) => line.trim().startsWith('31337 '))).toHaveLength(1);
  });

  it('is printed on a terminal, after the ready line; off a terminal logs stay JSON and the ready line carries the summary', () => {
    // LOG_FORMAT=auto: pretty only on a terminal; json and pretty as asked.
    expect(prettyLogs('auto', true)).toBe(true);
    expect(prettyLogs('auto', false)).toBe(false);
    expect(prettyLogs('json', true)).toBe(false);
    expect(prettyLogs('pretty', false)).toBe(true);
    expect(createProcessLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'auto' }, 'embedded', true).print).toBeInstanceOf(Function);
    expect(createProcessLogger({ LOG_LEVEL: 'silent', LOG_FORMAT: 'auto' }, 'embedded', false).print).toBeUndefined();

    const summary = startupSummary(running);
    const logged: unknown[][] = [];
    const logger = { info: (...args: unknown[]) => void logged.push(args) } as never;
    const printed: string[][] = [];
    announceReady(logger, { url: running.url, summary }, (lines) => printed.push(lines));
    expect(logged).toEqual([['ready: http://127.0.0.1:3000  (docs: http://127.0.0.1:3000/docs)']]);
    expect(printed).toEqual([renderStartupSummary(summary)]);

    logged.length = 0;
    announceReady(logger, { url: running.url, summary });
    expect(logged).toEqual([[{ summary }, 'ready: http://127.0.0.1:3000  (docs: http://127.0.0.1:3000/docs)']]);
  });
});
