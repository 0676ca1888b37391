import { runProcess } from './process.ts';
import { start } from './service.ts';

// `npm start`: the whole service on embedded defaults (its own PostgreSQL, demo registry and devnet
// when DATABASE_URL is unset), or whatever the environment configures.
void runProcess('embedded', (config, logger) => start(config, logger));
