import { z } from 'zod';
import { defineConcern, intFromEnv } from './define.ts';

/** How every process reads the chains through their RPC providers (the registry's rpcUrls and rpcQuorum). */
export const chainSettings = defineConcern({
  name: 'chains',
  schema: z.object({
    /** A chain's RPC provider further than this many blocks (ledgers) from the median head of its providers is not used until it is back within it. */
    RPC_MAX_HEAD_LAG_BLOCKS: intFromEnv(1, 1_000_000).default(20),
    /** A read not answered by a provider within this many ms is also asked of the next-ranked one. */
    RPC_STALL_TIMEOUT_MS: intFromEnv(50, 60_000).default(2_000),
  }),
});
