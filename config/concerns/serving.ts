import { z } from 'zod';
import { defineConcern, intFromEnv } from './define.ts';

/** What a long-running process serves besides its work: the interface it binds, its /metrics port and how often its sampled metrics are read. */
export const servingSettings = defineConcern({
  name: 'serving',
  schema: z.object({
    /** Interface the API binds to, and the worker's and the prover's /metrics. */
    HOST: z.string().min(1).default('0.0.0.0'),
    /**
     * Port of a separate listener (same HOST) serving only GET /metrics, so Prometheus scrapes are not
     * public with the API; 0 picks a free one. Unset: the API process serves no metrics (its port
     * answers 404 for /metrics) unless METRICS_ON_API_PORT is `true`; the worker and the prover serve
     * theirs on 9464.
     */
    METRICS_PORT: intFromEnv(0, 65535).optional(),
    /**
     * How often the metrics that need PostgreSQL or Temporal are read into memory: the trade gauges
     * (by the one process that leads their sampler), `relayer_db_up` (every process) and the proofs
     * queue's backlog (the worker). A scrape only serves what was read, so it answers in an outage.
     */
    METRICS_SAMPLE_SECONDS: intFromEnv(1, 3600).default(15),
  }),
});
