import { z } from 'zod';
import { defineConcern, intFromEnv } from './define.ts';

/** The embedded run (`npm start` without DATABASE_URL): its own PostgreSQL, the demo registry, the local devnet, the pg-boss runner. */
export const embeddedSettings = defineConcern({
  name: 'embedded',
  schema: z.object({
    /**
     * Production escape hatch: lets `NODE_ENV=production npm start` run the embedded PostgreSQL and the
     * local devnets (a production-mode test run), knowingly. Default `false`: production refuses them (exit 78).
     */
    ALLOW_EMBEDDED_IN_PRODUCTION: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((value) => value === 'true'),
    /** TCP port of the embedded PostgreSQL. */
    EMBEDDED_PG_PORT: intFromEnv(1, 65535).default(54329),
    /** Registry file loaded into an empty database by the embedded run. */
    DEMO_REGISTRY_FILE: z.string().min(1).default('devnet/registry.json'),
    /**
     * The local two-chain devnet (anvil 31337 and 31338 with the reference contracts), its state kept
     * in DATA_DIR/devnet. `auto`: started by the embedded run (no DATABASE_URL); `on`/`off` force it.
     */
    DEVNET: z.enum(['auto', 'on', 'off']).default('auto'),
    /** JSON-RPC ports of devnet chains 31337 and 31338; 0 picks free ports. */
    DEVNET_PORT_A: intFromEnv(0, 65535).default(8545),
    DEVNET_PORT_B: intFromEnv(0, 65535).default(8546),
    /** Whether the local devnet includes the Stellar network (devnet/stellar: Soroban contracts as wasm on the real host), chain 148. */
    STELLAR_DEVNET: z.enum(['on', 'off']).default('on'),
    /** Its Stellar RPC port; 0 picks a free one. */
    STELLAR_DEVNET_PORT: intFromEnv(0, 65535).default(8000),
    /**
     * How often the embedded runner checks open trades' timer jobs and arms again any pg-boss gave
     * up on (retries spent in a long outage) or lost, and queues again a proof whose job it gave up.
     * 0: only at process start.
     */
    EMBEDDED_TIMER_RESUME_SECONDS: intFromEnv(0, 3600).default(60),
  }),
});
