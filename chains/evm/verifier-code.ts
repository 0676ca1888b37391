import type { Web3 } from 'web3';
import type { VerificationKeyJson } from '../../circuits/verification-key.ts';
import { rpcCall } from './rpc.ts';

/** `verifier()` of the EVM AdManager and OrderPortal (RelayerRequests.sol's immutable `verifier`). */
const VERIFIER_SELECTOR = '0x2b7ac3f3';

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
 * Why `contract` (its `role`) does not check proofs with `vk`'s verifier, or null when it does: its
 * `verifier()` address's code must push every constant of the key. Throws `RpcUnavailableError`.
 */
export async function evmVerifierDifferences(web3: Web3, role: string, contract: string, vk: VerificationKeyJson): Promise<string | null> {
  const answer = await rpcCall(`verifier() of ${contract}`, () => web3.eth.call({ to: contract, data: VERIFIER_SELECTOR }));
  const hex = String(answer).replace(/^0x/, '');
  if (hex.length !== 64) return `${role} ${contract} has no verifier() (answered 0x${hex})`;
  const verifier = `0x${hex.slice(24)}`;
  const code = await rpcCall(`code of ${verifier}`, () => web3.eth.getCode(verifier));
  return codeHoldsKey(String(code), vk) ? null : `${role} ${contract} checks proofs with verifier ${verifier}, whose code is not this key's verifier`;
}
