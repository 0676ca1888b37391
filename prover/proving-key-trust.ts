import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import type { Logger } from 'pino';
import * as snarkjs from 'snarkjs';
import { artifacts, type BuildManifest } from '../circuits/artifacts.ts';
import { verificationKeySha256, type VerificationKeyJson } from '../circuits/verification-key.ts';

export type { VerificationKeyJson };
import { ConfigError, type Config } from '../config/config.ts';

/** The proving key a process will prove with, checked: its verification key and that key's sha256. */
export interface TrustedProvingKey {
  zkey: string;
  verificationKey: VerificationKeyJson;
  vkSha256: string;
}

export interface ProvingKeyFiles {
  zkey: string;
  manifest: string;
}

/**
 * The verification key inside a zkey. snarkjs builds its multi-threaded curve for this; the curve
 * is terminated after unless this thread already had one (someone else's, still in use), or the
 * process would never exit.
 */
export async function verificationKeyOf(zkey: string): Promise<VerificationKeyJson> {
  const holder = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
  const hadCurve = Boolean(holder.curve_bn128);
  try {
    return (await snarkjs.zKey.exportVerificationKey(zkey)) as VerificationKeyJson;
  } finally {
    if (!hadCurve) await holder.curve_bn128?.terminate();
  }
}

/**
 * Production's refusal of a proving key it cannot trust (a process that proves or signs unlocks
 * calls it before it starts anything). With NODE_ENV=production it throws `ConfigError` (the
 * process exits 78) naming the proving key when circuits/build/manifest.json says the key comes
 * from a development ceremony (unless PROVING_KEY_ALLOW_DEVELOPMENT, for production-mode test
 * stacks, which is logged), or when the zkey's verification key does not hash to
 * PROVING_KEY_VK_SHA256. Resolves with the checked key; outside production with undefined (nothing
 * read: development runs prove with whatever key is built).
 */
export async function checkProvingKey(
  config: Pick<Config, 'NODE_ENV' | 'PROVING_KEY_VK_SHA256' | 'PROVING_KEY_ALLOW_DEVELOPMENT'>,
  logger: Logger,
  files: ProvingKeyFiles = { zkey: artifacts.zkey, manifest: artifacts.manifest },
): Promise<TrustedProvingKey | undefined> {
  if (config.NODE_ENV !== 'production') return undefined;
  const name = relative(process.cwd(), files.zkey) || files.zkey;
  if (config.PROVING_KEY_VK_SHA256 === undefined) {
    throw new ConfigError(`PROVING_KEY_VK_SHA256: required in production by a process that proves or signs unlocks: ` +
      `the sha256 of the verification key of the proving key ${name} it may use (its manifest's ceremony.vkSha256)`);
  }

  let manifest: BuildManifest;
  try {
    manifest = JSON.parse(await readFile(files.manifest, 'utf8')) as BuildManifest;
  } catch (error) {
    throw new ConfigError(`proving key ${name}: its manifest ${files.manifest} cannot be read ` +
      `(${(error as Error).message}); production proves only with a key whose ceremony it records`);
  }
  const ceremony = manifest.ceremony as BuildManifest['ceremony'] | string;
  if (typeof ceremony !== 'object' || ceremony.kind !== 'multi-party') {
    const said = typeof ceremony === 'object' ? ceremony.kind : String(ceremony);
    if (!config.PROVING_KEY_ALLOW_DEVELOPMENT) {
      throw new ConfigError(
        `proving key ${name}: manifest.json says it comes from a development ceremony (${said}): whoever ran it can forge proofs. `
        + 'Run a multi-party ceremony (circuits/README.md, "Running a proving-key ceremony with real contributors") before production',
      );
    }
    logger.warn(
      { provingKey: name, ceremony: said },
      'PROVING_KEY_ALLOW_DEVELOPMENT: proving with a development key in production mode (test stacks only: it can be forged)',
    );
  }
  let verificationKey: VerificationKeyJson;
  try {
    verificationKey = await verificationKeyOf(files.zkey);
  } catch (error) {
    throw new ConfigError(`proving key ${name} cannot be read: ${(error as Error).message}`);
  }
  const vkSha256 = verificationKeySha256(verificationKey);
  if (vkSha256 !== config.PROVING_KEY_VK_SHA256) {
    throw new ConfigError(`proving key ${name}: its verification key hashes to ${vkSha256}, not ` +
      `PROVING_KEY_VK_SHA256 ${config.PROVING_KEY_VK_SHA256 ?? '(unset)'}`);
  }
  if (typeof ceremony === 'object' && ceremony.vkSha256 !== vkSha256) {
    throw new ConfigError(`proving key ${name}: its verification key hashes to ${vkSha256}, but manifest.json ` +
      `records ${ceremony.vkSha256}: the manifest is not this key's`);
  }
  return { zkey: files.zkey, verificationKey, vkSha256 };
}
