import type { rpc } from '@stellar/stellar-sdk';
import type { VerificationKeyJson } from '../../circuits/verification-key.ts';
import { stellarView } from './views.ts';

const word = (value: string) => BigInt(value).toString(16).padStart(64, '0');

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

/** Why `contract` (its `role`) holds another verification key than `vk`, or null. Throws `RpcUnavailableError`. */
export async function stellarVerifierDifferences(server: rpc.Server, role: string, contract: string, vk: VerificationKeyJson): Promise<string | null> {
  const { value } = await stellarView(server, contract, 'verification_key');
  return Buffer.from(value as Uint8Array).equals(sorobanKeyBytes(vk)) ? null : `${role} ${contract} holds another verification key`;
}
