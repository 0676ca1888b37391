import type { ConfigConcern } from './concerns/define.ts';
import { chainSettings } from './concerns/chains.ts';
import { databaseSettings } from './concerns/database.ts';
import { embeddedSettings } from './concerns/embedded.ts';
import { httpApiSettings } from './concerns/http-api.ts';
import { jobSettings } from './concerns/jobs.ts';
import { keeperSettings } from './concerns/keeper.ts';
import { processSettings } from './concerns/process.ts';
import { proverSettings } from './concerns/prover.ts';
import { servingSettings } from './concerns/serving.ts';
import { signInSettings } from './concerns/sign-in.ts';
import { signerSettings } from './concerns/signer.ts';
import { temporalSettings } from './concerns/temporal.ts';
import { tradeSettings } from './concerns/trades.ts';
import { webhookSettings } from './concerns/webhooks.ts';

/**
 * What a process runs as: `api`, `worker` (trade lifecycle, webhooks, audit), `prover` (proofs),
 * `migrate` (the schema Job), or `embedded` (`npm start`: everything in one process).
 */
export type ProcessRole = 'api' | 'worker' | 'prover' | 'migrate' | 'embedded';

/** Every concern, in the order the configuration lists them (and reports their problems). */
export const CONCERNS = [
  processSettings, httpApiSettings, servingSettings, databaseSettings, embeddedSettings, webhookSettings, signInSettings,
  signerSettings, tradeSettings, jobSettings, proverSettings, temporalSettings, chainSettings, keeperSettings,
] as const;

/** What the processes that run Temporal workflows or activities read: the trades and their proofs. */
const TEMPORAL_PROCESS = [processSettings, databaseSettings, servingSettings, temporalSettings, proverSettings, tradeSettings, chainSettings];

/**
 * The concerns each role uses, so whose rules it checks (what production demands of them, settings
 * that go together). A new concern is added to CONCERNS and to the roles that read it.
 * - migrate changes the schema: DATABASE_URL and nothing else;
 * - the prover proves (the trades' activities build the proof's inputs);
 * - the worker drives the trades, delivers webhooks, runs the scheduled jobs and sends the keeper's
 *   transactions (its keeper keys); it signs no request, so no signer, JWT, SEP-10 or SIWE setting;
 * - the api serves HTTP, signs in and signs requests: all but the embedded run's and the keeper's;
 * - the embedded run (`npm start`) is everything in one process.
 */
export const ROLE_CONCERNS: Record<ProcessRole, readonly ConfigConcern<any, any>[]> = {
  migrate: [processSettings, databaseSettings],
  prover: TEMPORAL_PROCESS,
  worker: [...TEMPORAL_PROCESS, webhookSettings, jobSettings, keeperSettings],
  // The api serves and signs requests; it never sends the keeper's transactions nor holds its keys.
  api: CONCERNS.filter((concern) => concern !== embeddedSettings && concern !== keeperSettings),
  embedded: CONCERNS,
};
