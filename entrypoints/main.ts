import { runProcess } from './process.ts';
import { start } from './service.ts';
import { startupSummary } from './summary.ts';

// `npm start`: the whole service on embedded defaults (its own PostgreSQL, demo registry and devnet
// when DATABASE_URL is unset), or whatever the environment configures. The native prover is built
// on the first start when cargo is there, so proofs are native from the start. It serves once the
// EVM chains are up; the local Stellar network joins when built (minutes on a fresh clone).
void runProcess('embedded', async (config, logger) => {
  const running = await start(config, logger, { buildNativeProver: true, stellarJoinsLater: true });
  return Object.assign(running, { summary: startupSummary(running) });
});
