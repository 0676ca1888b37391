import path from 'node:path';
import { EVM_DEV_ACCOUNT, STELLAR_DEV_ACCOUNT } from './dev-accounts.ts';
import type { RunningService } from './service.ts';

/** One chain of the local devnet as a person uses it: where to connect, a funded account, how to get more. */
export interface ChainSummary {
  chainId: string;
  name: string;
  rpcUrl: string;
  /** What a wallet needs besides the URL: the EVM chain id, or the Stellar network passphrase. */
  network: string;
  /** A funded development account (DEVNET ONLY: its key is public) and what it holds. */
  account: { address: string; secret: string; holds: string };
  /** How to get more funds on this chain. */
  more: string;
}

/** What a person needs once `npm start` is up: where everything is and what to do next. */
export interface StartupSummary {
  api: string;
  docs: string;
  openapi: string;
  metrics?: string;
  /** Which prover proves, in words. */
  proofs: string;
  /** The Node.js this process runs on: its version (`process.version`) and binary. */
  node: { version: string; binary: string };
  /** The local devnet's chains (empty when this process started none). */
  chains: ChainSummary[];
  /** Devnet chains still joining (the local Stellar network while it builds), with their state. */
  joining: { chainId: string; name: string; state: string }[];
  /** Where the embedded run keeps its state (absolute), when it runs its own PostgreSQL. */
  dataDir?: string;
  /** How to start from scratch, or undefined when this process keeps no data of its own. */
  reset?: string;
}

/** What the summary reads of a running service (`RunningService` is one); its devnet by shape only. */
export interface SummarySource extends Pick<RunningService, 'url' | 'metricsUrl' | 'embeddedDatabase' | 'proverBackend'> {
  /** What proves now (`RunningService.proverStatus`): while the native prover builds, the summary says snarkjs proves until it is built. */
  proverStatus?: RunningService['proverStatus'];
  /** The devnet chains' states (`RunningService.devnetChains`); chains not `ready` are listed as joining. */
  devnetChains?: RunningService['devnetChains'];
  config: Pick<RunningService['config'], 'DATA_DIR'>;
  devnet?: {
    rpcUrls: Record<string, string>;
    deployments: Record<string, { testErc20: string }>;
    registry: { chains: { chainId: string | number; name: string }[] };
    stellar?: { node: { rpcUrl: string; networkPassphrase: string } };
  };
}

/**
 * The start-up summary of a running service: API, docs and metrics URLs, the prover, each devnet
 * chain with its RPC URL, network, a funded dev account and how to get more, where the data lives
 * and how to reset it. Data only; `renderStartupSummary` writes it for a terminal.
 */
export function startupSummary(running: SummarySource): StartupSummary {
  const { devnet } = running;
  const chains: ChainSummary[] = [];
  for (const [chainId, rpcUrl] of Object.entries(devnet?.rpcUrls ?? {})) {
    const name = devnet!.registry.chains.find((chain) => String(chain.chainId) === chainId)?.name ?? `chain ${chainId}`;
    if (rpcUrl === devnet!.stellar?.node.rpcUrl) {
      const friendbot = `${rpcUrl}/friendbot?addr=<G... address>`;
      chains.push({
        chainId, name, rpcUrl,
        network: `Stellar network passphrase "${devnet!.stellar.node.networkPassphrase}"`,
        account: { address: STELLAR_DEV_ACCOUNT.publicKey(), secret: STELLAR_DEV_ACCOUNT.secret(), holds: '10 000 XLM, 1 000 000 TUSD' },
        more: `the friendbot gives any new account 10 000 XLM: curl '${friendbot}' (or rpc.Server.requestAirdrop)`,
      });
      continue;
    }
    const token = devnet!.deployments[chainId]?.testErc20;
    chains.push({
      chainId, name, rpcUrl,
      network: `EVM chain id ${chainId}`,
      account: { address: EVM_DEV_ACCOUNT.address, secret: EVM_DEV_ACCOUNT.privateKey, holds: '10 000 ETH, 1 000 000 TUSD' },
      more: `anvil's 10 accounts (mnemonic "test test test test test test test test test test test junk") are ` +
        `funded alike; ETH: anvil_setBalance on the RPC; TUSD: mint(address,uint256) on ${token} (open to anyone)`,
    });
  }
  const dataDir = running.embeddedDatabase ? path.resolve(running.config.DATA_DIR) : undefined;
  return {
    api: running.url,
    docs: `${running.url}/docs`,
    openapi: `${running.url}/openapi.json`,
    metrics: running.metricsUrl ? `${running.metricsUrl}/metrics` : undefined,
    proofs: proofsLine(running),
    node: { version: process.version, binary: process.execPath },
    chains,
    joining: (running.devnetChains?.() ?? []).filter((chain) => chain.state !== 'ready').map(({ chainId, name, state }) => ({ chainId, name, state })),
    dataDir,
    reset: dataDir ? `stop (Ctrl-C), delete ${dataDir}, start again: a new database, development keys and chains` : undefined,
  };
}

/** Which prover proves, in words: the native prover, snarkjs and why, or snarkjs until the native prover being built takes over. */
function proofsLine({ proverBackend, proverStatus, url }: SummarySource): string {
  if (proverStatus?.().state === 'building') {
    return 'snarkjs until the native prover is built (cargo builds it now, first start only; native proofs take over then, ' +
      `the log says when; its state: ${url}/health)`;
  }
  return proverBackend.backend === 'native' ? `native prover (${proverBackend.binary})` : `snarkjs (${proverBackend.reason})`;
}

/**
 * The summary as the lines a terminal shows once at start-up, each a thing a person can open, copy
 * or run. Plain text: it is written as is, beside the pretty log.
 */
export function renderStartupSummary(summary: StartupSummary): string[] {
  const lines = [
    '',
    'Relayer ready',
    `  API        ${summary.api}   (health: ${summary.api}/health)`,
    `  Docs       ${summary.docs}   (OpenAPI: ${summary.openapi}; ${summary.api}/ leads here)`,
  ];
  if (summary.metrics) lines.push(`  Metrics    ${summary.metrics}`);
  lines.push(`  Proofs     ${summary.proofs}`, `  Node       ${summary.node.version} (${summary.node.binary})`);
  if (summary.chains.length === 0 && summary.joining.length === 0) {
    lines.push('  Chains     no local devnet in this process: the registered chains are at GET /v1/chains');
  } else {
    lines.push('  Chains (local devnet; the accounts below are public development keys, never use them elsewhere)');
    for (const chain of summary.chains) {
      lines.push(
        `    ${chain.chainId.padEnd(6)} ${chain.name}: RPC ${chain.rpcUrl}, ${chain.network}`,
        `           dev account ${chain.account.address}  secret ${chain.account.secret}  (${chain.account.holds})`,
        `           more: ${chain.more}`,
      );
    }
    for (const chain of summary.joining) {
      lines.push(`    ${chain.chainId.padEnd(6)} ${chain.name}: ${chain.state}; it joins when ready, the log says when (its state: ${summary.api}/health)`);
    }
  }
  if (summary.dataDir) lines.push(`  Data       ${summary.dataDir}  (PostgreSQL in pg/, generated keys in secrets.json, chain state in devnet/)`);
  if (summary.reset) lines.push(`  Reset      ${summary.reset}`);
  lines.push('  Stop       Ctrl-C', '');
  return lines;
}
