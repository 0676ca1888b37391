import { z } from 'zod';
import { databaseSettings } from './concerns/database.ts';
import { embeddedSettings } from './concerns/embedded.ts';
import { httpApiSettings } from './concerns/http-api.ts';
import { jobSettings } from './concerns/jobs.ts';
import { keeperSettings } from './concerns/keeper.ts';
import { processSettings } from './concerns/process.ts';
import { chainSettings } from './concerns/chains.ts';
import { processSettings as settingsOfThisProcess } from './held-secrets.ts';
import { proverSettings } from './concerns/prover.ts';
import { servingSettings } from './concerns/serving.ts';
import { signInSettings } from './concerns/sign-in.ts';
import { signerSettings } from './concerns/signer.ts';
import { temporalSettings } from './concerns/temporal.ts';
import { tradeSettings } from './concerns/trades.ts';
import { webhookSettings } from './concerns/webhooks.ts';
import { ROLE_CONCERNS, type ProcessRole } from './roles.ts';

export { isLoopbackHost } from './concerns/define.ts';

/**
 * The configuration of the service, read from the environment and validated at start-up: one
 * schema per concern (config/concerns/, every key documented there with its default), composed
 * here into one. Every process reads every setting's type and range (a malformed value stops
 * start-up naming it); the rules of a concern (what production demands, settings that go together)
 * are checked only by the processes whose role uses it (config/roles.ts), so a migrate Job needs
 * DATABASE_URL alone and a prover no sign-in or signer setting. docs/configuration.md's table
 * mirrors the settings.
 */
export const configSchema = z.object({
  ...processSettings.schema.shape,
  ...httpApiSettings.schema.shape,
  ...servingSettings.schema.shape,
  ...databaseSettings.schema.shape,
  ...embeddedSettings.schema.shape,
  ...webhookSettings.schema.shape,
  ...signInSettings.schema.shape,
  ...signerSettings.schema.shape,
  ...tradeSettings.schema.shape,
  ...jobSettings.schema.shape,
  ...proverSettings.schema.shape,
  ...temporalSettings.schema.shape,
  ...chainSettings.schema.shape,
  ...keeperSettings.schema.shape,
});

export type Config = z.infer<typeof configSchema>;

/** The chain id SIWE messages name outside production when SIWE_CHAIN_ID is unset: the devnet's chain A (devnet/index.ts). */
export const DEVELOPMENT_SIWE_CHAIN_ID = 31337;

/** What SIWE messages name: SIWE_DOMAIN, SIWE_URI, SIWE_CHAIN_ID, or (unset, outside production) the API's bound port and the devnet. */
export function siweSettingsOf(config: Config, apiPort: number): { domain: string; uri: string; chainId: number } {
  return {
    domain: config.SIWE_DOMAIN ?? `localhost:${apiPort}`,
    uri: config.SIWE_URI ?? `http://localhost:${apiPort}`,
    chainId: config.SIWE_CHAIN_ID ?? (config.NODE_ENV === 'production' ? 1 : DEVELOPMENT_SIWE_CHAIN_ID),
  };
}

/** Raised when the environment does not describe a runnable service; the message names each bad variable. */
export class ConfigError extends Error {}

/**
 * Parses the environment (or any record of strings) into a typed config for a process of `role`
 * (by default the embedded run, which uses every concern), or throws `ConfigError` naming each bad
 * setting: a malformed value of any setting, a rule broken of a concern the role uses.
 */
export function loadConfig(env: Record<string, string | undefined> = settingsOfThisProcess(), role: ProcessRole = 'embedded'): Config {
  const known = Object.fromEntries(
    Object.keys(configSchema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const schema = configSchema.superRefine((config, ctx) => {
    for (const concern of ROLE_CONCERNS[role]) concern.check?.(config, ctx);
  });
  const parsed = schema.safeParse(known);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const received = known[String(issue.path[0])];
      return `${issue.path.join('.')}: ${issue.message}${received === undefined ? '' : ` (received '${received}')`}`;
    });
    throw new ConfigError(`invalid configuration${role === 'embedded' ? '' : ` of the ${role} process`}:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}
