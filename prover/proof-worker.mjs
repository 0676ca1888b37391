// Entry file of the prover's Piscina threads. The worker logic is TypeScript (proof-worker.ts);
// Node 20 does not apply `--import tsx` from a Worker's execArgv, so register tsx's loader in
// this thread first, then load it.
import { register } from 'tsx/esm/api';

register();
const worker = await import('./proof-worker.ts');

export default worker.default;
export const warm = worker.warm;
