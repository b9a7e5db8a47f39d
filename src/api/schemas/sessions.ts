import { z } from 'zod';
import { AGENT_STATES, CONFIRM_ACTIONS, TURN_MODES } from '../../core/events';
import { userMessageText } from '../../core/client-frames';
import { MEMORY_MODES } from '../../agent/memory';

const tokenCounts = z.object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() });

export const sessionSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    owner_id: z.string(),
    channel: z.string().describe('web, slack, telegram, …'),
    session_key: z.string().nullable().describe('`<channel>::<conversation>` for chat channels; null for web sessions.'),
    state: z.enum(AGENT_STATES),
    active_workflow_id: z.string().nullable(),
    config: z.record(z.string(), z.unknown()),
    token_counts: tokenCounts,
    active_tools: z.array(z.string()),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    archived_at: z.iso.datetime().nullable(),
    pending_confirmation: z
      .object({
        confirmation_id: z.string(),
        tool: z.string(),
        parameters: z.record(z.string(), z.unknown()),
        message: z.string(),
        approval: z
          .object({
            approvers: z.string(),
            quorum: z.int(),
            approvals: z.int(),
            approved_by: z.array(z.string()),
            escalated: z.boolean(),
            expires_at: z.iso.datetime(),
            text: z.string(),
          })
          .optional()
          .describe('Present when an approval policy governs the tool: who may approve (POST /approvals/{id}) and how far it got.'),
      })
      .nullable()
      .describe('The `tool_confirm_request` the running turn waits for (answer it with POST /sessions/{id}/confirmations/{confirmation_id}), else null.'),
  })
  .meta({ id: 'Session' });

export const messageSchema = z
  .object({
    id: z.uuid(),
    session_id: z.uuid(),
    role: z.enum(['user', 'assistant', 'system', 'tool']),
    content: z.string(),
    tool_calls: z.array(z.unknown()),
    token_counts: tokenCounts,
    workflow_id: z.string().nullable(),
    workflow: z.string().nullable().describe('A reply: the name of the workflow that answered it; null on other messages.'),
    routing_reason: z
      .string()
      .nullable()
      .describe(
        'A reply: why its workflow was picked (`metadata`, `contact`, `trigger`, `default_workflow`, `session`, `default`, `command`), as its `done` said.',
      ),
    turn_id: z
      .uuid()
      .nullable()
      .describe(
        'A user message: the turn that answers it, its own id or, when it waited and was answered together with earlier ones (mid-turn `collect`), that turn; null on other messages.',
      ),
    reply_to: z.uuid().nullable().describe('A reply: the turn (user message id) it answers; null on other messages.'),
    status: z
      .enum(['answered', 'waiting'])
      .nullable()
      .describe(
        "A user message: `waiting` until its turn has ended (it runs, or it is queued behind a running turn: chat channels' mid-turn `queue`/`collect`), then `answered`; null on other messages. In the history only.",
      ),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Message' });

export const donePayloadSchema = z
  .object({
    message_id: z.uuid(),
    total_tokens: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    duration_ms: z.number().int(),
    tool_calls: z.number().int(),
    text: z.string(),
  })
  .meta({ id: 'DonePayload' });

export const sessionIdParams = z.object({ id: z.uuid() });

export const confirmationParams = sessionIdParams.extend({ confirmation_id: z.string().min(1).max(200) });
export const confirmToolBody = z.strictObject({
  action: z.enum(CONFIRM_ACTIONS).describe('allow, deny, allow_all, disable, forbid_all or cancel (spec, tool_confirm).'),
});
export const confirmedSchema = z.object({ confirmation_id: z.string(), action: z.enum(CONFIRM_ACTIONS) });

export const listQuery = z.object({
  cursor: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** The most tool rounds a session's `config.max_steps` may allow (decisions.md §8). */
export const MAX_STEPS_LIMIT = 200;

/**
 * What a session's `config` may set; the agent honours every key, and any other key is refused
 * (422 naming it) rather than stored and ignored. `null` for a key means "unset" (decisions.md §8):
 * on create it is as if the key were absent; on PATCH it removes the key (JSON merge-patch).
 */
export const sessionConfigSchema = z
  .strictObject({
    model: z.string().min(1).nullable().optional().describe('A model alias from GET /config/models.'),
    memory_mode: z
      .enum(MEMORY_MODES)
      .nullable()
      .optional()
      .describe('How memory summarises (also `PATCH /sessions/{id}/memory`); null: the default (`conversation`).'),
    system_prompt: z
      .string()
      .min(1)
      .max(100_000)
      .nullable()
      .optional()
      .describe("Replaces the system prompt (the workflow's or the default) for this session."),
    max_steps: z
      .number()
      .int()
      .min(1)
      .max(MAX_STEPS_LIMIT)
      .nullable()
      .optional()
      .describe(`Model rounds with tool calls per turn, a hard bound (default \`agent.max_tool_rounds\`; at most ${MAX_STEPS_LIMIT}).`),
    context_compression: z.boolean().nullable().optional().describe('false: never fold old turns into a summary (the oldest simply leave the prompt).'),
  })
  .meta({ id: 'SessionConfig' });
export type SessionConfig = z.infer<typeof sessionConfigSchema>;

export const createSessionBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  workflow: z.string().min(1).optional().describe('Name of the workflow to start with.'),
  config: sessionConfigSchema.optional().describe('`null` values count as unset.'),
});

export const updateSessionBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  config: sessionConfigSchema
    .optional()
    .describe('Merged into the stored config (JSON merge-patch, RFC 7396): keys sent replace, keys absent stay, `null` removes a key.'),
});

export const postMessageBody = z
  .strictObject({
    text: userMessageText.optional(),
    content: userMessageText.optional().describe('Accepted instead of `text`.'),
    mode: z.enum(TURN_MODES).default('normal'),
    metadata: z.record(z.string(), z.unknown()).default({}).describe('`workflow` selects a workflow by name.'),
  })
  .superRefine((body, context) => {
    if (body.text === undefined && body.content === undefined) {
      context.addIssue({ code: 'custom', path: ['text'], message: 'Required: the message text (or `content`).' });
    }
  });

/** `Idempotency-Key`: a retried POST with the same key is answered from the first, never a second turn. */
export const IDEMPOTENCY_KEY_MAX = 255;
export const postMessageHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(IDEMPOTENCY_KEY_MAX)
    .regex(/^[\x21-\x7e]+$/, 'Printable ASCII without spaces.')
    .optional()
    .describe(
      'Makes a retry safe: a request repeated with the same key (per session) answers the message the first one stored and starts no second turn. ' +
        'A key whose first request is still being taken in answers 409 CONFLICT; one whose first request was refused may be used again.',
    ),
});

export const clearMessagesBody = z.strictObject({ keep_last: z.number().int().min(0).default(0) }).optional();
