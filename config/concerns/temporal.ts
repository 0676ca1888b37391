import { z } from 'zod';
import { booleanFromEnv, defineConcern } from './define.ts';

/** Temporal, the production orchestrator: where its frontend is, the task queues, TLS. */
export const temporalSettings = defineConcern({
  name: 'temporal',
  schema: z.object({
    /** host:port of the Temporal frontend. Set: trades run as Temporal workflows; unset: the embedded pg-boss runner. */
    TEMPORAL_ADDRESS: z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port').optional(),
    /** Temporal namespace of the trade workflows. */
    TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
    /** Task queue of the trade workflows and their light activities (the `worker` process). */
    TEMPORAL_TASK_QUEUE: z.string().min(1).default('trade-lifecycle'),
    /** Task queue of `generateProof` (the `prover` processes). */
    TEMPORAL_PROOFS_TASK_QUEUE: z.string().min(1).default('proofs'),
    /** TLS to the Temporal frontend with the system's roots (implied by any TEMPORAL_TLS_* file or TEMPORAL_API_KEY). */
    TEMPORAL_TLS: booleanFromEnv('false'),
    /** Path of a PEM file of the CA that signed the frontend's certificate (else the system's roots). */
    TEMPORAL_TLS_CA: z.string().min(1).optional(),
    /** Paths of the PEM client certificate and its key for mTLS: both or neither. */
    TEMPORAL_TLS_CERT: z.string().min(1).optional(),
    TEMPORAL_TLS_KEY: z.string().min(1).optional(),
    /** The name the frontend's certificate must carry, when not the host of TEMPORAL_ADDRESS. */
    TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
    /** API key (Temporal Cloud): sent as a bearer token on every call, over TLS. A secret. */
    TEMPORAL_API_KEY: z.string().min(1).optional(),
  }),
  check(config, ctx) {
    if ((config.TEMPORAL_TLS_CERT === undefined) !== (config.TEMPORAL_TLS_KEY === undefined)) {
      const missing = config.TEMPORAL_TLS_CERT === undefined ? 'TEMPORAL_TLS_CERT' : 'TEMPORAL_TLS_KEY';
      ctx.addIssue({ code: 'custom', path: [missing], message: 'is required with TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY (mTLS needs both)' });
    }
  },
});
