import { z } from 'zod';
import type { ChannelEnvBinding } from '../../src/core/channel';
import { midTurnSetting } from '../shared/settings';

/** Paths the hub's own API and sockets use: the widget's socket path may not sit under them. */
const RESERVED_PATH = /^\/(api|ws)(\/|$)/i;

/**
 * `channels.webchat` in config.yaml (documented there, key by key): the website widget channel,
 * anonymous visitors talking through the Rasa Webchat protocol over Socket.IO. Off until `enabled`.
 */
export const webchatSettingsSchema = z.strictObject({
  enabled: z.boolean().default(false),
  mid_turn: midTurnSetting,
  /** The Socket.IO path the widget connects to (its `socketPath`); Rasa's default, so widgets need only `socketUrl`. */
  path: z
    .string()
    .regex(/^\/[A-Za-z0-9._~\/-]*$/, 'must be a URL path starting with "/"')
    .refine((path) => !RESERVED_PATH.test(path), "must not be under /api/ or /ws/ (the hub's own endpoints)")
    .transform((path) => (path.length > 1 ? path.replace(/\/+$/, '') : path))
    .refine((path) => path !== '/', 'must not be "/" (the web UI)')
    .default('/socket.io'),
  /** Sites that may embed the widget (exact origins), besides the hub's own origins (`api.allowed_origins`). */
  allowed_origins: z
    .array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'must be an origin such as https://www.example.com (scheme and host, no path)'))
    .default([]),
  /** Signs widget session ids (secret, env only); unset: a random key per process start. */
  session_secret: z.string().min(16, 'must be at least 16 characters').nullable().default(null),
  /** `paragraphs`: one widget message per paragraph as the answer streams; `final`: the whole answer at its end. */
  stream: z.enum(['paragraphs', 'final']).default('paragraphs'),
  /** A tool that needs confirmation: `buttons` (the six actions as quick replies) or `refuse` (that call denied; the tool stays for later turns). */
  confirmations: z.enum(['buttons', 'refuse']).default('refuse'),
  /** Per workflow (its name): `buttons` or `refuse` for turns that workflow answers, instead of `confirmations`. */
  workflow_confirmations: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a workflow name'), z.enum(['buttons', 'refuse'])).default({}),
  /** Distinct widget sessions, per client address, that may send messages within an hour. */
  new_sessions_per_ip_per_hour: z.number().int().positive().max(1_000_000).default(20),
  /** Messages (and button clicks) per widget session in any minute. */
  messages_per_session_per_minute: z.number().int().positive().max(10_000).default(10),
  /** Longest visitor message, in characters (the spec's 65,536 at most). */
  max_message_chars: z.number().int().positive().max(65_536).default(4000),
  /** Serve the demo page at /webchat/demo (the widget from its npm package, pointed at this hub). */
  demo: z.boolean().default(true),
});

/** The validated `channels.webchat` section (the session secret included: never log it). */
export type WebchatSettings = z.infer<typeof webchatSettingsSchema>;

/** The `SERVICE_WEBCHAT_*` variables. */
export const WEBCHAT_ENV: readonly ChannelEnvBinding[] = [
  { env: 'SERVICE_WEBCHAT_ENABLED', key: 'enabled', kind: 'bool' },
  { env: 'SERVICE_WEBCHAT_SESSION_SECRET', key: 'session_secret', kind: 'nullable-string', secret: true },
  { env: 'SERVICE_WEBCHAT_ALLOWED_ORIGINS', key: 'allowed_origins', kind: 'list' },
  { env: 'SERVICE_WEBCHAT_PATH', key: 'path', kind: 'string' },
];
