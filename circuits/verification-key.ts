import { createHash } from 'node:crypto';

/** The Groth16 verification key as snarkjs exports it (verification_key.json). */
export interface VerificationKeyJson {
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
}

/**
 * The verification key's one spelling: `verification_key.json` as the build and the ceremony write
 * it. Its sha256 is what PROVING_KEY_VK_SHA256 names, what manifest.json records as `vkSha256`, and
 * what an operator gets with `sha256sum circuits/build/verification_key.json`.
 */
export function verificationKeyText(vk: unknown): string {
  return `${JSON.stringify(vk, null, 1)}\n`;
}

/** sha256 (hex) of the verification key's spelling. */
export function verificationKeySha256(vk: unknown): string {
  return createHash('sha256').update(verificationKeyText(vk)).digest('hex');
}
