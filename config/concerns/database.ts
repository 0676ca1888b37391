import { z } from 'zod';
import { defineConcern, intFromEnv } from './define.ts';

/** The PostgreSQL a process works on. */
export const databaseSettings = defineConcern({
  name: 'database',
  schema: z.object({
    /** PostgreSQL connection string. Unset: an embedded PostgreSQL whose data lives in DATA_DIR. */
    DATABASE_URL: z.string().url().optional(),
    /** PostgreSQL pool size per process. */
    DB_POOL_MAX: intFromEnv(1, 200).default(10),
  }),
});
