import type { Logger } from 'pino';
import type { VerificationKeyJson } from '../circuits/verification-key.ts';
import { ConfigError } from '../config/config.ts';
import { rpcCall } from './evm/rpc.ts';
import { stellarView } from './stellar/views.ts';
import type { ChainClientFactory } from './verify.ts';

/** What the check needs of a registered chain (db/repositories/registry-cache.ts `ChainConnection`). */
export interface VerifierChain {
  chainId: string;
  name: string;
  kind: 'EVM' | 'STELLAR';
  adManagerAddress: string;
  orderPortalAddress: string;
  rpcUrl: string | null;
}

/** `verifier()` of the EVM AdManager and OrderPortal (RelayerRequests.sol's immutable `verifier`). */
const VERIFIER_SELECTOR = '0x2b7ac3f3';

const word = (value: string) => BigInt(value).toString(16).padStart(64, '0');

/**
 * The numbers Verifier.sol (snarkjs's Groth16 template) holds as constants: alpha, beta, gamma,
 * delta and every IC point's coordinates (G2 with the c1 coordinate first, as the template and the
 * precompile take them).
 */
export function verifierConstants(vk: VerificationKeyJson): bigint[] {
  const g1 = (p: string[]) => [p[0]!, p[1]!];
  const g2 = (p: string[][]) => [p[0]![1]!, p[0]![0]!, p[1]![1]!, p[1]![0]!];
  return [...g1(vk.vk_alpha_1), ...g2(vk.vk_beta_2), ...g2(vk.vk_gamma_2), ...g2(vk.vk_delta_2), ...vk.IC.flatMap(g1)].map(BigInt);
}

/**
 * True when EVM runtime `code` pushes every constant of `vk`'s verifier: a `PUSHn` of the value's
 * shortest big-endian bytes, which is how solc writes a constant whatever its settings. A verifier
 * of any other key lacks at least delta's and the IC points' constants (they differ with every
 * ceremony).
 */
export function codeHoldsKey(code: string, vk: VerificationKeyJson): boolean {
  const hex = code.replace(/^0x/, '').toLowerCase();
  return verifierConstants(vk).every((value) => {
    let bytes = value.toString(16);
    if (bytes.length % 2) bytes = `0${bytes}`;
    const push = (0x5f + bytes.length / 2).toString(16);
    return hex.includes(`${push}${bytes}`);
  });
}

/**
 * The key as the Soroban contracts' `verification_key` view returns it: alpha ‖ beta ‖ gamma ‖ delta
 * ‖ IC, host-encoded (G1 `x ‖ y`, G2 `x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0`, 32-byte big-endian words), as
 * contracts/soroban/codegen.ts writes it into params.rs.
 */
export function sorobanKeyBytes(vk: VerificationKeyJson): Buffer {
  const g1 = (p: string[]) => word(p[0]!) + word(p[1]!);
  const g2 = (p: string[][]) => word(p[0]![1]!) + word(p[0]![0]!) + word(p[1]![1]!) + word(p[1]![0]!);
  return Buffer.from(g1(vk.vk_alpha_1) + g2(vk.vk_beta_2) + g2(vk.vk_gamma_2) + g2(vk.vk_delta_2) + vk.IC.map(g1).join(''), 'hex');
}

/**
 * What differs on one chain: for each of its two contracts, whether the verifier it checks proofs
 * with is the one `vk` verifies. EVM: the contract's `verifier()` address and that address's code
 * (it must push every constant of the key); Soroban: the contract's `verification_key` view. An
 * empty list: the chain's verifiers are this key's. RPC failures throw `RpcUnavailableError`.
 */
export async function verifierDifferences(chain: VerifierChain, vk: VerificationKeyJson, clients: ChainClientFactory): Promise<string[]> {
  if (!chain.rpcUrl) return [`has no rpcUrl in the registry: its verifiers cannot be read`];
  const differences: string[] = [];
  for (const [role, contract] of [['AdManager', chain.adManagerAddress], ['OrderPortal', chain.orderPortalAddress]] as const) {
    if (chain.kind === 'EVM') {
      const web3 = clients.evm(chain.rpcUrl);
      const answer = await rpcCall(`verifier() of ${contract}`, () => web3.eth.call({ to: contract, data: VERIFIER_SELECTOR }));
      const hex = String(answer).replace(/^0x/, '');
      if (hex.length !== 64) {
        differences.push(`${role} ${contract} has no verifier() (answered 0x${hex})`);
        continue;
      }
      const verifier = `0x${hex.slice(24)}`;
      const code = await rpcCall(`code of ${verifier}`, () => web3.eth.getCode(verifier));
      if (!codeHoldsKey(String(code), vk)) {
        differences.push(`${role} ${contract} checks proofs with verifier ${verifier}, whose code is not this key's verifier`);
      }
    } else {
      const { value } = await stellarView(clients.stellar(chain.rpcUrl), contract, 'verification_key');
      const deployed = Buffer.from(value as Uint8Array);
      if (!deployed.equals(sorobanKeyBytes(vk))) differences.push(`${role} ${contract} holds another verification key`);
    }
  }
  return differences;
}

/**
 * Start-up check of a process that proves or signs unlocks (production): every chain in the
 * registry must verify with this proving key's verification key, else the process refuses to start
 * (ConfigError, exit 78) naming each chain and contract that differs. A proof made with this key
 * would fail there (funds stuck until the refund) or, worse, that chain accepts proofs of a key
 * someone else holds. A chain that cannot be read now fails start-up (exit 1): its supervisor
 * retries, and nothing is served on a guess.
 */
export async function checkDeployedVerifiers(
  chains: VerifierChain[],
  vk: VerificationKeyJson,
  vkSha256: string,
  clients: ChainClientFactory,
  logger: Logger,
): Promise<void> {
  const problems: string[] = [];
  for (const chain of chains) {
    for (const difference of await verifierDifferences(chain, vk, clients)) problems.push(`chain ${chain.name} (${chain.chainId}): ${difference}`);
  }
  if (problems.length > 0) {
    throw new ConfigError(`the deployed verifiers are not those of the proving key (verification key ` +
      `sha256 ${vkSha256}); refusing to serve:\n  ${problems.join('\n  ')}`);
  }
  logger.info({ chains: chains.map((chain) => chain.chainId), vkSha256 }, 'deployed verifiers match the proving key');
}
