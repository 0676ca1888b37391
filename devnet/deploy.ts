import { ContractFactory, JsonRpcProvider, NonceManager, Wallet, getCreateAddress, type InterfaceAbi } from 'ethers';
import type { DomainNameVersion } from '../chains/evm/typed-data.ts';
import { anvilAccounts } from './accounts.ts';
import type { Artifact, DevnetArtifacts } from '../contracts/evm/artifacts.ts';

/** Addresses of one chain's deployment. */
export interface BridgeDeployment {
  chainId: number;
  poseidon2: string;
  poseidon3: string;
  testErc20: string;
  adManager: string;
  orderPortal: string;
  /** Absent while the circuit's verifier is not built: unlocks then revert. */
  verifier?: string;
}

export interface DeployOptions {
  rpcUrl: string;
  artifacts: DevnetArtifacts;
  /** EVM address of the relayer whose signatures the contracts accept. */
  relayer: string;
  domain: DomainNameVersion;
  /** Deployer key; anvil's account 0 by default. */
  deployerKey?: string;
  /** Test tokens minted to each of anvil's ten accounts (smallest unit). */
  mintPerAccount?: bigint;
}

/** Symbol, name and decimals of the devnet's test ERC-20 on every chain. */
export const TEST_TOKEN = { symbol: 'TUSD', name: 'Test USD', decimals: 6 } as const;

/**
 * Deploys the bridge contracts in a fixed order from a fresh deployer, so the addresses depend
 * only on the deployer (nonces 0..5): Poseidon2, Poseidon3, TestERC20, AdManager, OrderPortal,
 * Groth16Verifier. The verifier comes last and its address is computed ahead, so the others keep
 * their addresses whether or not the circuit's verifier exists yet. Then mints test tokens.
 */
export async function deployBridgeContracts(options: DeployOptions): Promise<BridgeDeployment> {
  const provider = new JsonRpcProvider(options.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const { chainId } = await provider.getNetwork();
    const wallet = new Wallet(options.deployerKey ?? anvilAccounts(1)[0]!.privateKey, provider);
    const signer = new NonceManager(wallet);
    const startNonce = await provider.getTransactionCount(wallet.address);
    const verifierAddress = getCreateAddress({ from: wallet.address, nonce: startNonce + 5 });
    const { artifacts } = options;
    const deploy = async (artifact: Artifact, ...args: unknown[]) => {
      const contract = await new ContractFactory(artifact.abi as InterfaceAbi, artifact.bytecode, signer).deploy(...args);
      await contract.waitForDeployment();
      return contract.getAddress();
    };
    const poseidon2 = await deploy(artifacts.poseidon2);
    const poseidon3 = await deploy(artifacts.poseidon3);
    const testErc20 = await deploy(artifacts.testErc20, TEST_TOKEN.name, TEST_TOKEN.symbol, TEST_TOKEN.decimals);
    const { name, version } = options.domain;
    const adManager = await deploy(artifacts.adManager, options.relayer, verifierAddress, name, version);
    const orderPortal = await deploy(artifacts.orderPortal, options.relayer, verifierAddress, poseidon2, poseidon3, name, version);
    let verifier: string | undefined;
    if (artifacts.verifier) verifier = await deploy(artifacts.verifier);
    else await (await signer.sendTransaction({ to: wallet.address, value: 0n })).wait(); // keep later nonces where they would be

    const token = new ContractFactory(artifacts.testErc20.abi as InterfaceAbi, artifacts.testErc20.bytecode, signer).attach(testErc20);
    const mint = options.mintPerAccount ?? 1_000_000n * 10n ** BigInt(TEST_TOKEN.decimals);
    for (const account of anvilAccounts(10)) {
      await ((await token.getFunction('mint')(account.address, mint)) as { wait(): Promise<unknown> }).wait();
    }
    return { chainId: Number(chainId), poseidon2, poseidon3, testErc20, adManager, orderPortal, ...(verifier ? { verifier } : {}) };
  } finally {
    provider.destroy();
  }
}
