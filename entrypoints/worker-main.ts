import { runProcess } from './process.ts';
import { composeWorker } from './compose/worker.ts';
import { startTemporalProcess } from './temporal-process.ts';

// `npm run worker`: the Temporal worker on queue `trade-lifecycle` (trade workflows, verification,
// state writes). Needs DATABASE_URL (schema migrated by `npm run migrate`) and TEMPORAL_ADDRESS.
void runProcess('worker', (config, logger) => startTemporalProcess('worker', config, logger, composeWorker));
