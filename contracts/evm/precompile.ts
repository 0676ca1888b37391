/**
 * `npm ci`'s prepare step (package.json `prepare`): compiles the contracts the devnet deploys into
 * solc's cache (`compile.ts`, node_modules/.cache/solc), so a fresh clone's first `npm start`
 * deploys its chains at once instead of loading the compiler first (about 20 s on a loaded 2-core
 * machine). Nothing else reads what it prints; a compile error fails `npm ci`, as it would fail the start.
 */
import { loadDevnetArtifacts } from './artifacts.ts';

await loadDevnetArtifacts();
