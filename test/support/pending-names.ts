import { readFileSync } from 'node:fs';
import { configSchema } from '../../config.ts';

/**
 * Names the deploy files use that arrive with the Temporal orchestrator (issue 11: `npm run
 * worker`, `npm run prover`, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE), not yet in package.json and
 * config.ts. The name checks accept them, and deploy/names.test.ts fails as soon as one of them
 * exists, so this list is emptied the day they land rather than left to hide a typo.
 */
export const PENDING_SETTINGS = ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE'] as const;
export const PENDING_SCRIPTS = ['worker', 'prover'] as const;

/** Settings config.ts validates. */
export const configSettings = new Set(Object.keys(configSchema.shape));
/** package.json scripts. */
export const packageScripts = new Set(Object.keys(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts));

/** Settings a deploy file may name: config.ts's, and the pending ones. */
export const deployableSettings = new Set<string>([...configSettings, ...PENDING_SETTINGS]);
/** Scripts a deploy file may run: package.json's, and the pending ones. */
export const deployableScripts = new Set<string>([...packageScripts, ...PENDING_SCRIPTS]);
