import { readFileSync } from 'node:fs';
import { configSchema } from '../../config/config.ts';

/** Settings config.ts validates: the only environment variables a deploy file may set for our processes. */
export const configSettings = new Set(Object.keys(configSchema.shape));
/** package.json scripts: the only commands a deploy file may run in our image. */
export const packageScripts = new Set(Object.keys(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts));
