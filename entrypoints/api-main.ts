import { ConfigError } from '../config/config.ts';
import { runProcess } from './process.ts';
import { start } from './service.ts';

// `npm run api`: the API process of a deployment. It needs DATABASE_URL and a migrated schema
// (`npm run migrate`), and never starts a database or chains of its own.
void runProcess('api', (config, logger) => {
  if (!config.DATABASE_URL) throw new ConfigError('DATABASE_URL is required for the api process (npm start runs the embedded service)');
  return start({ ...config, DEVNET: 'off' }, logger, { migrate: false, role: 'api' });
});
