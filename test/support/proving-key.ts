import { readFileSync } from 'node:fs';
import { artifacts, type BuildManifest } from '../../circuits/artifacts.ts';

/**
 * PROVING_KEY_VK_SHA256 of the committed proving key (its manifest's `ceremony.vkSha256`), for test
 * stacks that run the processes in production mode on that development key (with
 * PROVING_KEY_ALLOW_DEVELOPMENT: it has no ceremony transcript, so production refuses it otherwise).
 */
export const DEVELOPMENT_VK_SHA256 = (JSON.parse(readFileSync(artifacts.manifest, 'utf8')) as BuildManifest).ceremony.vkSha256;
