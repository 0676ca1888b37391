import { runProcess } from './process.ts';
import { composeProver } from './compose/prover.ts';
import { startTemporalProcess } from './temporal-process.ts';

// `npm run prover`: the Temporal worker on queue `proofs` (generateProof on the Piscina pool,
// PROVER_POOL_SIZE threads). Needs DATABASE_URL and TEMPORAL_ADDRESS; run as many as you like.
void runProcess('prover', (config, logger) => startTemporalProcess('prover', config, logger, composeProver));
