import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { checkDeployedVerifiers } from '../chains/deployed-verifiers.ts';
import { checkProvingKey, type TrustedProvingKey } from '../prover/proving-key-trust.ts';
import type { ChainReaders } from './parts/chains.ts';

/**
 * The proving-key checks of a process that proves or signs unlocks (api and embedded run, worker,
 * prover), in production: `trustProvingKey` before anything starts (a key whose ceremony transcript
 * is missing or does not verify, or whose verification key is not PROVING_KEY_VK_SHA256, stops it:
 * exit 78 naming the key), then, once the
 * registry can be read, `checkChainVerifiers` (a chain whose deployed verifier is not this key's
 * stops it: exit 78 naming the chain). Outside production both do nothing.
 */
export function trustProvingKey(config: Config, logger: Logger): Promise<TrustedProvingKey | undefined> {
  return checkProvingKey(config, logger);
}

/** See `trustProvingKey`: every registered chain's verifiers against the trusted key. */
export async function checkChainVerifiers(
  key: TrustedProvingKey | undefined, chains: Pick<ChainReaders, 'registryCache' | 'chains'>, logger: Logger,
): Promise<void> {
  if (!key) return;
  await checkDeployedVerifiers(await chains.registryCache.allChains(), key.verificationKey, key.vkSha256, chains.chains, logger, {
    // A chain that could not be read at start-up and turns out to hold another key's verifier: stop as
    // start-up would have (exit 78), rather than sign or prove for it.
    onLateRefusal: (refusal) => {
      logger.fatal(refusal.message);
      process.exit(78); // EX_CONFIG, as a refusal at start-up
    },
  });
}
