import { z } from 'zod';
import { defineConcern } from './define.ts';

/** What every process reads: the run mode, its logs, where development state is kept. */
export const processSettings = defineConcern({
  name: 'process',
  schema: z.object({
    /** `production` forbids generated/default secrets; anything else is a development run. */
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    /** pino log level. */
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * How logs are written: `json`, one object per line (what containers and log collectors read);
     * `pretty`, a readable line per entry and a start-up summary (pino-pretty); `auto`, pretty when
     * stdout is a terminal, else json.
     */
    LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
    /** Directory for embedded state: PostgreSQL data, generated development keys. */
    DATA_DIR: z.string().min(1).default('./.data'),
  }),
});
