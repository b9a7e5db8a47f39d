import { z } from 'zod';
import { invalidCidrReason } from './cidr';
import { mcpSchema } from './mcp-schema';
import { parseRateLimitSpec } from './rate-limit-spec';
import type { ChannelSections } from './env-bindings';

/**
 * The whole configuration, as validated once at startup.
 *
 * Keys mirror config.yaml (snake_case). Every key has a built-in default here; config.yaml documents
 * them and environment variables (see env-bindings.ts) override both. Secrets have no default and are
 * read only from the environment.
 *
 * Objects are strict: an unknown key in config.yaml is refused, so a typo cannot silently fall back
 * to a default.
 */

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const port = z.number().int().min(0).max(65535);
const positiveInt = z.number().int().positive();
const optionalUrl = z.url().nullable();

export const JWT_SECRET_MIN_HEX = 32;

const serverSchema = z.strictObject({
  host: z.string().min(1).default('0.0.0.0'),
  port: port.default(8000),
  /** The URL clients use to reach this hub (links, SAML, Slack/Telegram webhooks). */
  public_url: optionalUrl.default(null),
  /** How long a graceful shutdown waits for running requests and turns before forcing. */
  shutdown_timeout_s: positiveInt.default(15),
});

const databaseSchema = z.strictObject({
  /** Secret (may hold a password): SERVICE_DATABASE_URL only. Null: SQLite file in data_dir. */
  url: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .nullable()
    .default(null),
  pool_max: positiveInt.default(10),
});

const redisSchema = z.strictObject({
  /** Secret (may hold a password): SERVICE_REDIS_URL only. Null: in-process queue and event bus. */
  url: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .nullable()
    .default(null),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'letters, digits, "_", ".", ":" or "-", at most 64')
    .default('switchboard'),
});

const logSchema = z.strictObject({
  level: z.enum(LOG_LEVELS).default('info'),
  /** auto: pretty when stdout is a terminal, JSON otherwise. */
  format: z.enum(['auto', 'json', 'pretty']).default('auto'),
});

/** SAML 2.0 single sign-on (decisions.md §2). Off until `enabled` and the IdP's entry point and certificate are set. */
const samlSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** The IdP's single sign-on URL (HTTP-Redirect binding). */
  entry_point: optionalUrl.default(null),
  /** Our SP entity ID, sent as Issuer and expected as the assertion's Audience. */
  issuer: z.string().min(1).default('switchboard'),
  /** The IdP's entity ID; when set, responses from another issuer are refused. */
  idp_issuer: z.string().min(1).nullable().default(null),
  /** The IdP's signing certificate (PEM), inline (SERVICE_SAML_IDP_CERT) or by file. */
  idp_cert: z.string().min(1).nullable().default(null),
  idp_cert_file: z.string().min(1).nullable().default(null),
  /** Our key for signing AuthnRequests (PEM). Secret: SERVICE_SAML_PRIVATE_KEY only, or a file. Null: unsigned requests. */
  private_key: z.string().min(1).nullable().default(null),
  private_key_file: z.string().min(1).nullable().default(null),
  /** Our certificate for that key (PEM), published in the SP metadata; inline (SERVICE_SAML_SP_CERT) or by file. */
  sp_cert: z.string().min(1).nullable().default(null),
  sp_cert_file: z.string().min(1).nullable().default(null),
  /** Where the IdP posts responses; null: <public_url>/api/v1/auth/saml/acs. Also the expected Recipient. */
  callback_url: optionalUrl.default(null),
  /** Where the browser lands after a login, with the tokens in the URL fragment; null: <public_url>/. */
  web_ui_url: optionalUrl.default(null),
  /** The attribute holding the role (`admin` or `user`); null: provisioned users are `user`. */
  role_attribute: z.string().min(1).nullable().default(null),
  /** Allowed clock difference with the IdP when checking validity windows. */
  clock_skew_s: z.number().int().min(0).max(300).default(30),
  /** `always`: only responses to our own AuthnRequests; `ifPresent` also allows IdP-initiated logins. */
  validate_in_response_to: z.enum(['always', 'ifPresent']).default('always'),
});

const authSchema = z.strictObject({
  /** Secret: SERVICE_JWT_SECRET only. Required: a random hex string of at least 32 characters. */
  jwt_secret: z
    .string({ error: 'is required: set it to a random hex string, e.g. `openssl rand -hex 32`' })
    .regex(
      new RegExp(`^[0-9a-fA-F]{${JWT_SECRET_MIN_HEX},}$`),
      `must be a hex string of at least ${JWT_SECRET_MIN_HEX} characters (e.g. \`openssl rand -hex 32\`)`,
    ),
  access_token_ttl_s: positiveInt.default(15 * 60),
  refresh_token_ttl_days: positiveInt.default(30),
  issuer: z.string().min(1).default('switchboard'),
  audience: z.string().min(1).default('switchboard-api'),
  saml: samlSchema.prefault({}),
});

/**
 * A `<N>/<window>` rate-limit spec (spec, Limits rule 1), stored trimmed. `prefault` runs the
 * built-in default through the same check, so a malformed default fails startup like any value.
 */
export function rateLimitSpec(defaultSpec: string) {
  return z
    .string({ error: 'expected a string "<N>/<second|minute|hour|day>", e.g. "5/minute"' })
    .superRefine((value, context) => {
      const parsed = parseRateLimitSpec(value);
      if (!parsed.ok) context.addIssue({ code: 'custom', message: parsed.reason });
    })
    .transform((value) => value.trim())
    .prefault(defaultSpec);
}

const rateLimitsSchema = z.strictObject({
  auth_register: rateLimitSpec('3/hour'),
  auth_login: rateLimitSpec('5/minute'),
  auth_refresh: rateLimitSpec('5/minute'),
  saml_acs: rateLimitSpec('5/minute'),
  default: rateLimitSpec('120/minute'),
  /**
   * Slack's and Telegram's webhook deliveries, per delivering address: they are authenticated by the
   * platform's signature or secret token, and a platform delivers from few addresses, so the default
   * per-IP limit would throttle a busy workspace into dropped events.
   */
  channel_webhooks: rateLimitSpec('6000/minute'),
});

/** Checked as a whole, so the message names `api.trusted_proxy_cidrs` and where it came from. */
const trustedProxyCidrs = z.array(z.string().min(1)).superRefine((entries, context) => {
  for (const entry of entries) {
    const reason = invalidCidrReason(entry);
    if (reason !== null) context.addIssue({ code: 'custom', message: reason });
  }
});

const apiSchema = z.strictObject({
  /** Browser origins allowed for CORS and WebSocket; the hub's own origin and the web UI dev server are always added. */
  allowed_origins: z.array(z.string().min(1)).default([]),
  trusted_proxy_cidrs: trustedProxyCidrs.default([]),
  /** Shared rate-limit store (Redis URL); SERVICE_SHARED_STORE_URL wins. Null: in-process memory. */
  shared_store_url: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .nullable()
    .default(null),
  rate_limits: rateLimitsSchema.prefault({}),
  /** How long `POST /sessions/{id}/messages?sync=true` waits for the turn to end. */
  sync_timeout_s: positiveInt.default(300),
});

const llmSchema = z.strictObject({
  provider: z.enum(['builtin', 'openai', 'anthropic']).default('builtin'),
  base_url: optionalUrl.default(null),
  /** Secret: SERVICE_LLM_API_KEY only. */
  api_key: z.string().min(1).nullable().default(null),
  model: z.string().min(1).default('builtin'),
  context_window: positiveInt.default(8192),
  /** Pause between the builtin provider's tokens, to watch streaming (demos, tests); 0: as fast as possible. */
  builtin_token_delay_ms: z.number().int().min(0).max(10_000).default(0),
  /** Longest silence from the model server (before its answer starts, between two chunks): then PROVIDER_UNREACHABLE. */
  timeout_s: positiveInt.max(3600).default(60),
  /** SDK retries on connection errors, 429 and 5xx; small, so a dead server is reported quickly. */
  max_retries: z.number().int().min(0).max(5).default(1),
  /** Output limit per model call (Anthropic requires one; OpenAI-compatible servers use their own). */
  max_output_tokens: positiveInt.default(4096),
});

const agentSchema = z.strictObject({
  /** The system prompt when no workflow supplies one. */
  system_prompt: z.string().min(1).default('You are Switchboard, a helpful assistant for teams. Answer clearly and briefly.'),
  /** Tools loaded in a new session (tools that need configuration stay unavailable until configured). */
  default_tools: z.array(z.string().min(1)).default(['current_time', 'calculator', 'knowledge_search', 'http_fetch', 'write_file']),
  /** Model rounds with tool calls per turn, a hard bound (a session's `max_steps` overrides it); then the model answers without tools. */
  max_tool_rounds: positiveInt.default(8),
  /** How long a `tool_confirm_request` waits for an answer before it counts as `deny` (spec: 5 minutes). */
  confirmation_timeout_s: positiveInt.default(300),
  /** Tokens of the context window kept free for the answer and tool work; the rest holds the conversation. */
  working_memory_tokens: positiveInt.default(1024),
});

const workerSchema = z.strictObject({
  /** Run turns inside the API process (`npm start`). false: serve only; turns need `npm run worker`. */
  embedded: z.boolean().default(true),
  /** Turns one worker process runs at once (different sessions; one session never runs two). */
  concurrency: positiveInt.default(8),
  /**
   * Redis: how long a worker's hold on a turn lasts (renewed every half of it); a dead worker's turn
   * is taken over within about this plus two stalled checks (BullMQ checks twice before it moves a job).
   */
  turn_lock_s: positiveInt.default(4),
  /** Redis: how often workers look for turns whose worker died. */
  stalled_check_s: positiveInt.default(2),
  /** A turn no worker has started after this long: the client gets a `WORKER_UNAVAILABLE` note (the turn stays queued). */
  pickup_warning_s: positiveInt.default(30),
});

/** Webhooks and schedules of workflows (issue 29; docs/guides/events.md). */
const hooksSchema = z.strictObject({
  /** Accept webhooks declared with `verify: none` (unsigned). Off: such a hook answers 401. */
  allow_unsigned: z.boolean().default(false),
  /** Requests per window to one hook, all senders together (a hook's own `rate_limit` wins); over it: 429 with Retry-After. */
  rate_limit: rateLimitSpec('60/minute'),
  /** Times an answer is posted at most when the chat platform fails (then the delivery is `failed`). */
  delivery_attempts: positiveInt.max(20).default(5),
  /** Wait before the second attempt; doubled for each further one. */
  delivery_backoff_ms: positiveInt.max(600_000).default(1_000),
  /**
   * A process working on a delivery renews its lease on it; a delivery whose lease ran out (its
   * process died) is picked up by the next start or another API process and finished once.
   */
  delivery_lease_ms: positiveInt.min(1_000).max(600_000).default(30_000),
  /** Run the schedules in this process (an API process; with Redis every API process joins, and each fire runs once). */
  schedules: z.boolean().default(true),
});

const websocketSchema = z.strictObject({
  /** Client silence after which a socket is closed, except while a turn runs (spec: 90 s). */
  idle_timeout_s: positiveInt.default(90),
});

/** The agent's built-in tools (decisions.md §4). */
const toolsSchema = z.strictObject({
  http_fetch: z
    .strictObject({
      /** Reach private, loopback and link-local addresses too (an internal deployment). Off: public addresses only. */
      allow_private: z.boolean().default(false),
      /** Host names (or IP literals) fetched whatever address they resolve to, e.g. an intranet wiki. */
      allowed_hosts: z.array(z.string().min(1)).default([]),
      timeout_s: positiveInt.max(300).default(15),
      /** Bytes of a response body read at most. */
      max_bytes: positiveInt.default(1_048_576),
      max_redirects: z.number().int().min(0).max(20).default(5),
      /** Characters of text given to the model at most. */
      max_text_chars: positiveInt.default(20_000),
    })
    .prefault({}),
  web_search: z
    .strictObject({
      /** Secret: SERVICE_WEB_SEARCH_API_KEY only. Null: web_search is unavailable (TOOL_EXPANSION_FAILED). */
      api_key: z.string().min(1).nullable().default(null),
      /** A Brave-Search-compatible endpoint (GET ?q=&count=, X-Subscription-Token header). */
      endpoint: z.url().default('https://api.search.brave.com/res/v1/web/search'),
      timeout_s: positiveInt.max(300).default(15),
      max_results: positiveInt.max(20).default(5),
    })
    .prefault({}),
  write_file: z
    .strictObject({
      /** Largest file written, in bytes. */
      max_bytes: positiveInt.default(1_048_576),
    })
    .prefault({}),
  run_command: z
    .strictObject({
      /** Off by default: shell commands on the hub's machine, each confirmed by a human. */
      enabled: z.boolean().default(false),
      timeout_s: positiveInt.max(3600).default(30),
      /** Bytes of stdout and of stderr kept each. */
      max_output_bytes: positiveInt.default(65_536),
    })
    .prefault({}),
});

/**
 * Prometheus metrics (docs/observability.md): off by default. On the API port `/metrics` answers
 * only a scraper that presents `token`; a listener of its own (`port`) is how a worker process,
 * which serves nothing else, is scraped.
 */
const metricsSchema = z.strictObject({
  /** Count and serve metrics. Off: nothing is counted and `/metrics` answers 404. */
  enabled: z.boolean().default(false),
  /** A listener of its own for `/metrics` (a worker process needs one); null: `/metrics` on the API port. */
  port: port.nullable().default(null),
  /** Address of that listener: loopback unless the scraper runs elsewhere. */
  host: z.string().min(1).default('127.0.0.1'),
  /** Secret: SERVICE_METRICS_TOKEN only. The bearer token a scraper presents; required on the API port. */
  token: z.string().min(16, 'at least 16 characters').nullable().default(null),
});

/** OpenTelemetry traces (docs/observability.md): off unless an OTLP endpoint is given. */
const tracesSchema = z.strictObject({
  /** OTLP/HTTP endpoint of a collector (`http://collector:4318/v1/traces`); null: no traces. */
  otlp_url: optionalUrl.default(null),
  /** `service.name` of the spans (the process role is added as `service.instance.role`). */
  service_name: z.string().min(1).default('switchboard'),
  /** Fraction of turns traced (a turn is traced whole or not at all). */
  sample_ratio: z.number().min(0).max(1).default(1),
});

/** The audit trail (GET /api/v1/audit). */
const auditSchema = z.strictObject({
  /** Days an audit row is kept; 0: forever. */
  retention_days: z.number().int().min(0).max(36_500).default(365),
});

const tokenBudget = z.number().int().min(0);

/** Token budgets per UTC day (GET /api/v1/usage shows what was spent). 0: no limit. */
const usageSchema = z.strictObject({
  /** Days of usage rows kept (GET /api/v1/usage reads no further back); 0: forever. */
  retention_days: z.number().int().min(0).max(36_500).default(400),
  budgets: z
    .strictObject({
      /** Tokens (input + output) each user or chat contact may use per day; 0: no limit. */
      per_user: tokenBudget.default(0),
      /** Budgets of particular users (by username, user id, or chat contact `slack:U123`), over per_user. */
      users: z.record(z.string().min(1), tokenBudget).default({}),
      /** Tokens each named workflow may use per day, all users together. */
      workflows: z.record(z.string().min(1), tokenBudget).default({}),
    })
    .prefault({}),
});

/**
 * The `channels` section: one strict sub-section per channel of the registry that has settings,
 * each validated by its adapter's own schema (adapters/<name>/settings.ts).
 */
function channelsSchema(channels: ChannelSections) {
  const shape: Record<string, z.ZodType> = {};
  for (const channel of channels) if (channel.config) shape[channel.name] = channel.config.schema.prefault({});
  return z.strictObject(shape);
}

/** The whole schema, for a hub with these channels (the composition root passes the registry's). */
export function configSchemaFor(channels: ChannelSections) {
  return z.strictObject({
    server: serverSchema.prefault({}),
    /** SQLite file, uploads and the tools' workspace live here. */
    data_dir: z.string().min(1).default('./data'),
    database: databaseSchema.prefault({}),
    redis: redisSchema.prefault({}),
    log: logSchema.prefault({}),
    // A missing section still validates, so a missing secret is reported by its own key.
    auth: z.preprocess((section) => section ?? {}, authSchema),
    api: apiSchema.prefault({}),
    llm: llmSchema.prefault({}),
    agent: agentSchema.prefault({}),
    worker: workerSchema.prefault({}),
    websocket: websocketSchema.prefault({}),
    hooks: hooksSchema.prefault({}),
    channels: channelsSchema(channels).prefault({}),
    tools: toolsSchema.prefault({}),
    /** MCP servers whose tools workflows may pin (docs/guides/mcp-tools.md). */
    mcp: mcpSchema.prefault({}),
    metrics: metricsSchema.prefault({}),
    traces: tracesSchema.prefault({}),
    audit: auditSchema.prefault({}),
    usage: usageSchema.prefault({}),
  });
}

/** The sections every hub has (`configSchema.shape.llm`, …), without any channel's. */
export const configSchema = configSchemaFor([]);

/** The validated configuration; `channels.<name>` is each channel's own, typed by its adapter. */
export type Config = z.infer<ReturnType<typeof configSchemaFor>>;
export type LogLevel = (typeof LOG_LEVELS)[number];
