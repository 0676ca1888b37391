import { z } from 'zod';
import { processSettings } from './held-secrets.ts';

/**
 * The one configuration of the service, read from the environment and validated at start-up.
 * Every key is documented here with its default; docs/configuration.md's table mirrors it.
 * A bad value stops start-up with an error naming the variable.
 */
const intFromEnv = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** An ISO 8601 time with its offset (2026-12-01T12:00:00Z), as Unix milliseconds. */
const isoTime = z
  .string()
  .refine((value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value)), {
    message: 'must be an ISO 8601 time with its offset, e.g. 2026-12-01T12:00:00Z',
  })
  .transform((value) => Date.parse(value));

export const configSchema = z.object({
  /** `production` forbids generated/default secrets; anything else is a development run. */
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** HTTP port of the API; 0 picks a free one (tests). */
  PORT: intFromEnv(0, 65535).default(3000),
  /**
   * Port of a separate listener (same HOST) serving only GET /metrics, so Prometheus scrapes are not
   * public with the API; 0 picks a free one. Unset: the API process serves no metrics (its port
   * answers 404 for /metrics) unless METRICS_ON_API_PORT is `true`.
   */
  METRICS_PORT: intFromEnv(0, 65535).optional(),
  /**
   * `true` serves GET /metrics on the API port itself, for a deployment whose API port is not public.
   * Off by default: the metrics name routes, queues and error rates nobody outside should read.
   */
  METRICS_ON_API_PORT: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((value) => value === 'true'),
  /** Interface the API binds to. */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** PostgreSQL connection string. Unset: an embedded PostgreSQL whose data lives in DATA_DIR. */
  DATABASE_URL: z.string().url().optional(),
  /** Directory for embedded state: PostgreSQL data, generated development keys. */
  DATA_DIR: z.string().min(1).default('./.data'),
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
  /** pino log level. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * How logs are written: `json`, one object per line (what containers and log collectors read);
   * `pretty`, a readable line per entry and a start-up summary (pino-pretty); `auto`, pretty when
   * stdout is a terminal, else json.
   */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** Largest accepted JSON body. */
  BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/, 'must look like 100kb').default('100kb'),
  /** Requests per window per client on every endpoint. */
  RATE_LIMIT_WINDOW_MS: intFromEnv(1000, 86_400_000).default(60_000),
  RATE_LIMIT_MAX: intFromEnv(1, 1_000_000).default(600),
  /** Stricter budget for /v1/auth/* (sign-in is the brute-force target). */
  AUTH_RATE_LIMIT_MAX: intFromEnv(1, 1_000_000).default(30),
  /**
   * Origins (scheme://host[:port], comma-separated) whose browser pages may call the API (CORS).
   * Development: unset or `*` allows any origin. Production: only the listed origins; `*` is refused,
   * unset allows none (same-origin pages and non-browser clients only).
   */
  CORS_ORIGINS: z
    .string()
    .transform((value, ctx) => {
      const origins = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
      return origins.map((origin) => {
        if (origin === '*') return origin;
        const normal = normalOrigin(origin);
        if (normal === undefined) ctx.addIssue({ code: 'custom', message: `'${origin}' is not an origin (http(s)://host[:port], no path)` });
        return normal ?? origin;
      });
    })
    .optional(),
  /** Number of reverse proxies in front of the API, so the rate limiter sees the client's address. */
  TRUST_PROXY_HOPS: intFromEnv(0, 10).default(0),
  /** PostgreSQL pool size per process. */
  DB_POOL_MAX: intFromEnv(1, 200).default(10),

  /** How long a request repeating an Idempotency-Key waits for the first one's answer before 409 (0: at once). */
  IDEMPOTENCY_WAIT_SECONDS: intFromEnv(0, 60).default(10),

  // --- Pushed status (server-sent events, webhooks) ---
  /** A comment line on every open event stream this often, so proxies keep it open. */
  SSE_HEARTBEAT_SECONDS: intFromEnv(1, 300).default(15),
  /** Event streams one client (IP, IPv6 /56) may hold open on one API process; one more is 429. */
  SSE_MAX_STREAMS_PER_CLIENT: intFromEnv(1, 100_000).default(20),
  /** Event streams one API process holds open in all (each is a socket, a heartbeat timer, a hub subscription); one more is 503. */
  SSE_MAX_STREAMS: intFromEnv(1, 1_000_000).default(10_000),
  /** How often an API process asks PostgreSQL whether the sessions behind its open /v1/events streams are still live; a revoked one's streams end then. */
  SSE_SESSION_CHECK_SECONDS: intFromEnv(1, 300).default(5),
  /** Lifetime of a stream ticket (POST /v1/events/ticket): single use, for opening GET /v1/events?ticket= from a browser's EventSource. */
  SSE_TICKET_TTL_SECONDS: intFromEnv(5, 600).default(60),
  /** One webhook delivery attempt's whole time (connect, send, answer); then it counts as failed. */
  WEBHOOK_TIMEOUT_SECONDS: intFromEnv(1, 60).default(10),
  /** Retry backoff after the n-th failure in a row: min(max, base * 2^(n-1)) seconds, times a random 0.5..1. */
  WEBHOOK_RETRY_BASE_SECONDS: intFromEnv(1, 3600).default(5),
  WEBHOOK_RETRY_MAX_SECONDS: intFromEnv(1, 86_400).default(3600),
  /** An endpoint failing this many times in a row, for at least WEBHOOK_DISABLE_AFTER_SECONDS, is disabled. */
  WEBHOOK_DISABLE_AFTER_FAILURES: intFromEnv(1, 100_000).default(20),
  WEBHOOK_DISABLE_AFTER_SECONDS: intFromEnv(0, 2_592_000).default(432_000),
  /** Webhook endpoints one user may register. */
  WEBHOOK_MAX_ENDPOINTS_PER_USER: intFromEnv(1, 1000).default(10),
  /** How often endpoints left behind (a lost notice, a crashed worker) are looked for. */
  WEBHOOK_SWEEP_SECONDS: intFromEnv(1, 3600).default(10),

  // --- Sign-in (SIWE, SEP-10) and sessions ---
  /** HMAC key for JWTs (HS256), at least 32 bytes. Generated into DATA_DIR outside production. */
  JWT_SECRET: z.string().optional(),
  /**
   * JWT key rotation (docs/security.md "Rotating keys"): the key JWT_SECRET replaces. Tokens carry a `kid`
   * (a fingerprint of their key); before JWT_KEY_SWITCH_AT this key signs, from then on JWT_SECRET,
   * and tokens of this key stay valid for one token lifetime after the switch (access:
   * ACCESS_TOKEN_TTL_SECONDS, refresh: REFRESH_TOKEN_TTL_SECONDS), so the rotation logs nobody out.
   */
  JWT_PREVIOUS_SECRET: z.string().optional(),
  /** ISO 8601 time from which JWT_SECRET signs tokens; set with JWT_PREVIOUS_SECRET. */
  JWT_KEY_SWITCH_AT: isoTime.optional(),
  /** Lifetime of an access token, seconds. */
  ACCESS_TOKEN_TTL_SECONDS: intFromEnv(30, 86_400).default(900),
  /** Lifetime of a refresh token, seconds. */
  REFRESH_TOKEN_TTL_SECONDS: intFromEnv(60, 31_536_000).default(2_592_000),
  /** `iss` and `aud` claims of every JWT the service issues; tokens carrying others are refused. */
  JWT_ISSUER: z.string().min(1).default('cross-chain-relayer'),
  JWT_AUDIENCE: z.string().min(1).default('cross-chain-relayer-api'),
  /** Absolute lifetime of a session (one sign-in), seconds: refreshing never extends it past this. */
  SESSION_MAX_AGE_SECONDS: intFromEnv(60, 31_536_000).default(2_592_000),
  /** How often expired challenges, ended sessions and expired refresh tokens are deleted, seconds; 0: never. */
  AUTH_PURGE_INTERVAL_SECONDS: intFromEnv(0, 86_400).default(3_600),
  /** Lifetime of a sign-in challenge, seconds. */
  CHALLENGE_TTL_SECONDS: intFromEnv(10, 3_600).default(300),
  /**
   * SIWE domain (host[:port] of the dApp) and URI the messages name. Required in production; unset
   * outside it they follow the API's port: `localhost:<port>`, `http://localhost:<port>` (the port
   * bound, when PORT is 0). See `siweSettingsOf`.
   */
  SIWE_DOMAIN: z.string().min(1).optional(),
  SIWE_URI: z.string().url().optional(),
  /** Chain ID written into SIWE messages. Unset: 1 in production, the devnet's first chain (31337) outside it. */
  SIWE_CHAIN_ID: intFromEnv(1, Number.MAX_SAFE_INTEGER).optional(),
  /** Secret seed (S...) of the key that signs SEP-10 challenges. Generated into DATA_DIR outside production. */
  SEP10_SIGNING_SECRET: z.string().optional(),
  /**
   * SEP-10 home domain (where stellar.toml lives, host[:port]) and web-auth domain (the host of
   * WEB_AUTH_ENDPOINT). Required in production; unset outside it, both follow the host each request
   * reached the service on (auth/sep10.ts), so a wallet pointed at http://127.0.0.1:3000 signs in.
   */
  SEP10_HOME_DOMAIN: z.string().min(1).max(59, 'must be at most 59 characters (SEP-10 manage_data key)').optional(),
  SEP10_WEB_AUTH_DOMAIN: z.string().min(1).max(64).optional(),
  /**
   * Horizon of that network. Set: SEP-10 sign-in checks an existing account's signers and medium
   * threshold there (an account Horizon does not know signs with its master key). Unset: master key only.
   */
  STELLAR_HORIZON_URL: z.string().url().optional(),
  /**
   * Stellar network passphrase for SEP-10 challenges and stellar.toml. Unset: the network of the
   * registry's Stellar chain (the lowest chain id if several), else the public test network.
   */
  STELLAR_NETWORK_PASSPHRASE: z.string().min(1).optional(),

  // --- Relayer signing of contract call data ---
  /** 0x-prefixed secp256k1 private key that signs EIP-712 requests. Generated into DATA_DIR outside production. */
  RELAYER_EVM_PRIVATE_KEY: z.string().optional(),
  /** Secret seed (S...) of the ed25519 key that signs Stellar requests. Generated into DATA_DIR outside production. */
  RELAYER_STELLAR_SECRET: z.string().optional(),
  /**
   * Relayer key rotation without downtime (docs/security.md "Rotating keys"): the keys being replaced. Before
   * RELAYER_KEY_SWITCH_AT the service signs with these (or, with RELAYER_SIGNER=pkcs11, the
   * PKCS11_*_PREVIOUS_KEY_LABEL keys), from then on with RELAYER_EVM_PRIVATE_KEY / RELAYER_STELLAR_SECRET
   * (the PKCS11_*_KEY_LABEL keys). A key with no previous one set did not change. The contracts must
   * already trust the new key (admin `rotateRelayer` / `rotate_relayer`) with a grace period covering
   * the switch plus SIGNED_REQUEST_TTL_SECONDS.
   */
  RELAYER_EVM_PREVIOUS_PRIVATE_KEY: z.string().optional(),
  RELAYER_STELLAR_PREVIOUS_SECRET: z.string().optional(),
  /** RELAYER_SIGNER=pkcs11 rotation: labels of the key pairs being replaced, in the same token. */
  PKCS11_EVM_PREVIOUS_KEY_LABEL: z.string().min(1).optional(),
  PKCS11_STELLAR_PREVIOUS_KEY_LABEL: z.string().min(1).optional(),
  /** ISO 8601 time from which the relayer signs with its current keys; required with any previous key. */
  RELAYER_KEY_SWITCH_AT: isoTime.optional(),
  /**
   * Where the relayer's signing keys live (docs/security.md "Relayer keys in an HSM"): `env` holds them in memory
   * from RELAYER_EVM_PRIVATE_KEY / RELAYER_STELLAR_SECRET (development; refused in production unless
   * RELAYER_SIGNER_ALLOW_ENV=true), `pkcs11` signs inside a PKCS#11 token (HSM) with the PKCS11_* settings.
   */
  RELAYER_SIGNER: z.enum(['env', 'pkcs11'], { error: 'must be env or pkcs11' }).default('env'),
  /** Production escape hatch: lets RELAYER_SIGNER=env start in production (staging, test stacks), knowingly. */
  RELAYER_SIGNER_ALLOW_ENV: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((value) => value === 'true'),
  /** RELAYER_SIGNER=pkcs11: path of the token's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  PKCS11_MODULE: z.string().min(1).optional(),
  /** RELAYER_SIGNER=pkcs11: the label of the token holding the keys. */
  PKCS11_TOKEN_LABEL: z.string().min(1).optional(),
  /** RELAYER_SIGNER=pkcs11: the token's user PIN; or PKCS11_PIN_FILE, a file whose first line is the PIN. */
  PKCS11_PIN: z.string().min(1).optional(),
  PKCS11_PIN_FILE: z.string().min(1).optional(),
  /** RELAYER_SIGNER=pkcs11: label of the secp256k1 key pair (EVM requests). */
  PKCS11_EVM_KEY_LABEL: z.string().min(1).optional(),
  /** RELAYER_SIGNER=pkcs11: label of the Ed25519 key pair (Stellar requests). */
  PKCS11_STELLAR_KEY_LABEL: z.string().min(1).optional(),
  /** A chain's RPC provider further behind the highest head than this many blocks (ledgers) is not used until it catches up. */
  RPC_MAX_HEAD_LAG_BLOCKS: intFromEnv(1, 1_000_000).default(20),
  /** A read not answered by a provider within this many ms is also asked of the next-ranked one. */
  RPC_STALL_TIMEOUT_MS: intFromEnv(50, 60_000).default(2_000),
  /** Seconds a signed request stays valid (its on-chain deadline). */
  SIGNED_REQUEST_TTL_SECONDS: intFromEnv(30, 86_400).default(600),
  CONFIRM_GRACE_SECONDS: intFromEnv(0, 7 * 86_400).default(900),
  /**
   * Longest life of a trade's reservation, seconds. The deposit request (createOrder) is signed for
   * min(this, SIGNED_REQUEST_TTL_SECONDS) and the reservation ends with it: after its deadline no
   * deposit can happen, so nothing is held for free any longer.
   */
  TRADE_RESERVATION_TTL_SECONDS: intFromEnv(1, 7 * 86_400).default(600),
  /**
   * Seconds from a trade's creation to its order's lockExpiry (the Bridger's last second to unlock
   * the ad side); the Maker's lock is accepted until an hour before it (the contracts' minimum unlock
   * window), the lock window's timer fires then. refundTime follows 6 h later. Must exceed the
   * deposit request's TTL plus that hour (checked at start).
   */
  ORDER_LOCK_EXPIRY_SECONDS: intFromEnv(3_601, 29 * 86_400).default(6 * 3_600),
  /** Open unfunded reservations (trades awaiting their deposit) one wallet may hold, on all ads together. */
  MAX_OPEN_RESERVATIONS_PER_WALLET: intFromEnv(1, 10_000).default(3),
  /** Open unfunded reservations one ad may carry, from all wallets together. */
  MAX_OPEN_RESERVATIONS_PER_AD: intFromEnv(1, 100_000).default(20),
  /**
   * At most one re-read of an ad's reservations (trades/unbacked-reservations.ts) per this many
   * seconds per ad and API process; requests meanwhile share the one running. 0: every request that
   * finds the ad taken re-reads (concurrent ones still share).
   */
  UNBACKED_RESERVATIONS_RECHECK_SECONDS: intFromEnv(0, 3600).default(10),
  /**
   * How often the trade start reconciler (in the worker on Temporal, in the API on the embedded
   * runner) starts trades whose reservation committed but whose lifecycle did not start; also how
   * long a new trade's start is left to its own request first. 0: only at process start.
   */
  TRADE_START_RECONCILE_SECONDS: intFromEnv(0, 3600).default(10),
  /**
   * How often the metrics that need PostgreSQL or Temporal are read into memory: the trade gauges
   * (by the one process that leads their sampler), `relayer_db_up` (every process) and the proofs
   * queue's backlog (the worker). A scrape only serves what was read, so it answers in an outage.
   */
  METRICS_SAMPLE_SECONDS: intFromEnv(1, 3600).default(15),
  /**
   * How often the embedded runner checks open trades' timer jobs and arms again any pg-boss gave
   * up on (retries spent in a long outage) or lost, and queues again a proof whose job it gave up.
   * 0: only at process start.
   */
  EMBEDDED_TIMER_RESUME_SECONDS: intFromEnv(0, 3600).default(60),
  /**
   * When the books audit runs (pg-boss cron, UTC; audit/): every open ad and trade compared with
   * its contracts, unreported events applied, the rest reported as drift. `off`: never (the test
   * service's default: tests run the audit themselves).
   */
  BOOKS_AUDIT_CRON: z.string().regex(/^off$|^(\S+\s+){4}\S+$/, "must be a 5-field cron expression or 'off'").default('*/5 * * * *'),
  /**
   * Most subjects one phase of a books audit run reads (phases: ad requests, open trades, ad
   * balances, each with its own budget): a flood in one phase cannot starve the others. A phase
   * that stops short keeps a cursor and the next run continues there (audit/README.md).
   */
  BOOKS_AUDIT_PHASE_MAX_ITEMS: intFromEnv(1, 1_000_000).default(1000),
  /**
   * Seconds one phase of a run may spend starting reads; what is under way then finishes. At most
   * 200: the three phases together stay well inside the audit job's 900 s expiry (audit/job.ts).
   */
  BOOKS_AUDIT_PHASE_SECONDS: intFromEnv(1, 200).default(120),
  /** Chain reads one audit phase keeps in flight at once. */
  BOOKS_AUDIT_READ_CONCURRENCY: intFromEnv(1, 64).default(8),
  /**
   * When the retention job runs (pg-boss cron, UTC; retention/): rows past their window are
   * deleted in bounded batches (docs/operations.md "Retention"). `off`: never.
   */
  RETENTION_CRON: z.string().regex(/^off$|^(\S+\s+){4}\S+$/, "must be a 5-field cron expression or 'off'").default('17 3 * * *'),
  /** Days the pushed events of an ended trade (after it ended) and of ads stay for `Last-Event-ID` replay. */
  RETENTION_PUSHED_EVENT_DAYS: intFromEnv(1, 3650).default(30),
  /** Days the webhook delivery log keeps an attempt. */
  RETENTION_WEBHOOK_DELIVERY_DAYS: intFromEnv(1, 3650).default(14),
  /** Days the chain events of an ended trade (after it ended) or a settled ad request stay. */
  RETENTION_CHAIN_EVENT_DAYS: intFromEnv(1, 3650).default(90),
  /** Days a confirmed or expired ad request stays after it was made. */
  RETENTION_AD_REQUEST_DAYS: intFromEnv(1, 3650).default(90),
  /**
   * Days the carried-out follow-ups (`trade_follow_ups`) of an ended trade stay after it ended:
   * what the machine asked for, for debugging the trade. Pending rows and open trades' rows stay.
   */
  RETENTION_FOLLOW_UP_DAYS: intFromEnv(1, 3650).default(30),
  /** Rows one retention delete takes at most (one short transaction each). */
  RETENTION_BATCH_SIZE: intFromEnv(1, 100_000).default(1000),
  /**
   * Ads one user may have PENDING (create signed, not yet confirmed on chain, not expired); beyond
   * it `POST /v1/ads/create` answers 429 naming the limit and records nothing.
   */
  MAX_PENDING_ADS_PER_USER: intFromEnv(1, 10_000).default(20),
  /**
   * Unsettled ad requests (create, fund, withdraw, close: PENDING until confirmed or settled) one
   * user may have on all their ads; beyond it those endpoints answer 429 naming the limit.
   */
  MAX_OPEN_AD_REQUESTS_PER_USER: intFromEnv(1, 100_000).default(50),
  /** EIP-712 domain name and version the contracts are deployed with. */
  EIP712_DOMAIN_NAME: z.string().min(1).default('ProofBridge'),
  EIP712_DOMAIN_VERSION: z.string().min(1).default('1'),

  // --- Prover ---
  /** Worker threads in the proof pool (default: number of CPUs). */
  PROVER_POOL_SIZE: intFromEnv(1, 256).optional(),
  /** Proofs that may wait for a worker; beyond this, callers get a "prover busy" error. */
  PROVER_QUEUE_MAX: intFromEnv(0, 100_000).default(256),
  /**
   * What proves: `native` (the Rust prover of prover/native/, built by `npm run build:native`),
   * `snarkjs`, or `auto`: native when built, else snarkjs. Logged at start-up.
   */
  PROVER_BACKEND: z.enum(['auto', 'native', 'snarkjs']).default('auto'),
  /** rayon threads one native proof may use (measured on 2 cores: 1, the pool is the parallelism). */
  PROVER_NATIVE_THREADS: intFromEnv(1, 256).default(1),
  /**
   * sha256 (hex) of the verification key of the proving key this deployment trusts: `sha256sum
   * circuits/build/verification_key.json`, also manifest.json's `ceremony.vkSha256`. Required in
   * production by the processes that prove or sign unlocks (api, worker, prover; not migrate): they
   * exit 78 naming the proving key unless its verification key hashes to this, and check that every
   * registered chain's deployed verifier is that key's (prover/proving-key-trust.ts).
   */
  PROVING_KEY_VK_SHA256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits (sha256sum circuits/build/verification_key.json)').optional(),
  /**
   * `true` lets a production-mode process prove with a key whose ceremony does not verify (a
   * development key, which has no transcript; logged at every start, with the reason). For
   * production-mode test stacks only: whoever ran a development ceremony can forge proofs. Default
   * `false`: production refuses such a key (exit 78).
   */
  PROVING_KEY_ALLOW_DEVELOPMENT: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((value) => value === 'true'),
  /**
   * Path of the phase-1 file (powers of tau) the proving key's ceremony transcript pins by sha256.
   * Required in production by the processes that prove or sign unlocks: they verify the key against
   * its transcript (circuits/build/ceremony-transcript.json), r1cs and this file before trusting it.
   */
  PROVING_KEY_PTAU: z.string().min(1).optional(),
  /**
   * Directory of the ceremony verdicts (one file per verified (zkey, transcript, r1cs, phase 1),
   * keyed by their sha256s), so a full verification runs once per key rather than at every start.
   * Used only when it and every directory above it can be written by no one but this process's
   * user (and root); otherwise every start verifies in full. Default DATA_DIR/proving-key-verdicts.
   */
  PROVING_KEY_VERDICT_DIR: z.string().min(1).optional(),
  /**
   * Distinct contributors a finished ceremony needs before its beacon: what `npm run ceremony --
   * verify --final` and production's check of the proving key require.
   */
  CEREMONY_MIN_CONTRIBUTORS: intFromEnv(1, 1000).default(2),

  // --- Temporal (production orchestrator) ---
  /** host:port of the Temporal frontend. Set: trades run as Temporal workflows; unset: the embedded pg-boss runner. */
  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'must be host:port').optional(),
  /** Temporal namespace of the trade workflows. */
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  /** Task queue of the trade workflows and their light activities (the `worker` process). */
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('trade-lifecycle'),
  /** Task queue of `generateProof` (the `prover` processes). */
  TEMPORAL_PROOFS_TASK_QUEUE: z.string().min(1).default('proofs'),
  /** TLS to the Temporal frontend with the system's roots (implied by any TEMPORAL_TLS_* file or TEMPORAL_API_KEY). */
  TEMPORAL_TLS: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false').transform((value) => value === 'true'),
  /** Path of a PEM file of the CA that signed the frontend's certificate (else the system's roots). */
  TEMPORAL_TLS_CA: z.string().min(1).optional(),
  /** Paths of the PEM client certificate and its key for mTLS: both or neither. */
  TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  /** The name the frontend's certificate must carry, when not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** API key (Temporal Cloud): sent as a bearer token on every call, over TLS. A secret. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
}).superRefine((config, ctx) => {
  if ((config.TEMPORAL_TLS_CERT === undefined) !== (config.TEMPORAL_TLS_KEY === undefined)) {
    const missing = config.TEMPORAL_TLS_CERT === undefined ? 'TEMPORAL_TLS_CERT' : 'TEMPORAL_TLS_KEY';
    ctx.addIssue({ code: 'custom', path: [missing], message: 'is required with TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY (mTLS needs both)' });
  }
  // The contracts refuse a lock with less than an hour left before lockExpiry (chains/timing.ts
  // HTLC_LIMITS): a deposit made at its request's deadline must still leave room to lock.
  const depositTtl = Math.min(config.SIGNED_REQUEST_TTL_SECONDS, config.TRADE_RESERVATION_TTL_SECONDS);
  if (config.ORDER_LOCK_EXPIRY_SECONDS <= depositTtl + 3_600) {
    ctx.addIssue({ code: 'custom', path: ['ORDER_LOCK_EXPIRY_SECONDS'], message: `must exceed the deposit request's TTL (${depositTtl} s) plus 3600 s` });
  }
  if (config.METRICS_ON_API_PORT && config.METRICS_PORT !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['METRICS_ON_API_PORT'], message: 'must not be true when METRICS_PORT is set: /metrics is served on one port' });
  }
  const previousRelayerKeys = ([
    'RELAYER_EVM_PREVIOUS_PRIVATE_KEY',
    'RELAYER_STELLAR_PREVIOUS_SECRET',
    'PKCS11_EVM_PREVIOUS_KEY_LABEL',
    'PKCS11_STELLAR_PREVIOUS_KEY_LABEL',
  ] as const)
    .filter((key) => config[key] !== undefined);
  if ((previousRelayerKeys.length > 0) !== (config.RELAYER_KEY_SWITCH_AT !== undefined)) {
    ctx.addIssue({ code: 'custom', path: ['RELAYER_KEY_SWITCH_AT'], message: previousRelayerKeys.length > 0
      ? `must be set with ${previousRelayerKeys.join(', ')}: the moment the current keys take over`
      : 'is set but no previous relayer key is (RELAYER_EVM_PREVIOUS_PRIVATE_KEY, RELAYER_STELLAR_PREVIOUS_SECRET or PKCS11_*_PREVIOUS_KEY_LABEL)' });
  }
  if ((config.JWT_PREVIOUS_SECRET !== undefined) !== (config.JWT_KEY_SWITCH_AT !== undefined)) {
    ctx.addIssue({ code: 'custom', path: ['JWT_KEY_SWITCH_AT'], message: 'set JWT_PREVIOUS_SECRET and JWT_KEY_SWITCH_AT together (JWT key rotation)' });
  }
  if (config.RELAYER_SIGNER === 'pkcs11') {
    for (const key of ['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_EVM_KEY_LABEL', 'PKCS11_STELLAR_KEY_LABEL'] as const) {
      if (config[key] === undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'must be set when RELAYER_SIGNER=pkcs11' });
    }
    // The PIN is a secret of the signing process alone (config/secrets.ts resolveSecrets checks it per role).
  }
  if (config.NODE_ENV !== 'production') return;
  // Raw keys in every pod's environment are the first thing an intruder takes: production signs in an HSM.
  if (config.RELAYER_SIGNER === 'env' && !config.RELAYER_SIGNER_ALLOW_ENV) {
    ctx.addIssue({
      code: 'custom',
      path: ['RELAYER_SIGNER'],
      message: 'is env (raw keys in the environment): production wants RELAYER_SIGNER=pkcs11 (docs/security.md ' +
        '"Relayer keys in an HSM"), or RELAYER_SIGNER_ALLOW_ENV=true to accept the risk',
    });
  }
  // Any origin in production would let every web page spend a signed-in user's token it obtained.
  if (config.CORS_ORIGINS?.includes('*')) {
    ctx.addIssue({ code: 'custom', path: ['CORS_ORIGINS'], message: 'must list the allowed origins in production, not *' });
  }
  // A production sign-in names the public site: a wallet shown "localhost" cannot tell a phishing page from the dApp.
  for (const key of SIGN_IN_DOMAIN_KEYS) {
    const value = config[key];
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'must be set in production: the public domain wallets show when signing in' });
    } else if (isLoopbackHost(value)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'must name the public domain in production, not localhost or a loopback address' });
    }
  }
});

/**
 * `value` as the browser's Origin header spells it (lower-case host, no default port, no slash),
 * or undefined when it is not an http(s) origin with nothing after it.
 */
function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** The settings whose host a wallet shows the user when signing in. */
const SIGN_IN_DOMAIN_KEYS = ['SIWE_DOMAIN', 'SIWE_URI', 'SEP10_HOME_DOMAIN', 'SEP10_WEB_AUTH_DOMAIN'] as const;

/**
 * True when `value` (a host, host:port or URL) names this machine: localhost and *.localhost,
 * 127.0.0.0/8, 0.0.0.0, ::1 and ::.
 */
export function isLoopbackHost(value: string): boolean {
  let host: string;
  try {
    host = (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? new URL(value) : new URL(`http://${value}`)).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '0.0.0.0'
    || host === '::1' || host === '::' || host === '0:0:0:0:0:0:0:1';
}

export type Config = z.infer<typeof configSchema>;

/** The chain id SIWE messages name outside production when SIWE_CHAIN_ID is unset: the devnet's chain A (devnet/index.ts). */
export const DEVELOPMENT_SIWE_CHAIN_ID = 31337;

/** What SIWE messages name: SIWE_DOMAIN, SIWE_URI, SIWE_CHAIN_ID, or (unset, outside production) the API's bound port and the devnet. */
export function siweSettingsOf(config: Config, apiPort: number): { domain: string; uri: string; chainId: number } {
  return {
    domain: config.SIWE_DOMAIN ?? `localhost:${apiPort}`,
    uri: config.SIWE_URI ?? `http://localhost:${apiPort}`,
    chainId: config.SIWE_CHAIN_ID ?? (config.NODE_ENV === 'production' ? 1 : DEVELOPMENT_SIWE_CHAIN_ID),
  };
}

/** Raised when the environment does not describe a runnable service; the message names each bad variable. */
export class ConfigError extends Error {}

/** Parses the environment (or any record of strings) into a typed config, or throws `ConfigError`. */
export function loadConfig(env: Record<string, string | undefined> = processSettings()): Config {
  const known = Object.fromEntries(
    Object.keys(configSchema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const parsed = configSchema.safeParse(known);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const received = known[String(issue.path[0])];
      return `${issue.path.join('.')}: ${issue.message}${received === undefined ? '' : ` (received '${received}')`}`;
    });
    throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

