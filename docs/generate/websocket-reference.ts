import path from 'node:path';
import ts from 'typescript';
import { z } from 'zod';
import { CLOSE } from '../../adapters/web/session-connection';
import { CONNECT_CLOSE, WEB_ADAPTER_DEFAULTS } from '../../adapters/web/web-adapter';
import { WS_CLOSE } from '../../src/auth/websocket';
import { clientFrameSchemas } from '../../src/protocol/client-frames';
import { ERROR_CODES } from '../../src/protocol/error-codes';
import { AGENT_STATES, TURN_MODES } from '../../src/protocol/frames';
import { STREAM_LEVELS } from '../../src/protocol/log-lines';
import { cell, code, generatedBanner, table } from './markdown';
import { repoRoot } from './repo';

/** One field of a frame's payload, read from the TypeScript types (server frames) or zod schemas (client frames). */
export interface FrameField {
  name: string;
  type: string;
  optional: boolean;
  meaning: string;
}

export interface FrameType {
  type: string;
  direction: 'server' | 'client';
  meaning: string;
  fields: FrameField[];
}

/**
 * What each frame type is for. The list of types and their fields comes from the code; the words
 * come from here (or a field's TSDoc comment in src/protocol/frames.ts, which wins). A type or field
 * the code has and this file does not describe stops the generator, so the reference never lags.
 */
const FRAME_MEANINGS: Record<string, string> = {
  token: 'One piece of the answer as it is generated (once per output token).',
  tool_start: 'The agent calls a tool.',
  tool_end: 'A tool returned, successfully or with an error.',
  tool_confirm_request:
    "A tool that changes something needs a human's approval; the turn waits for a `tool_confirm` (5 minutes, then it counts as `deny`). Show it at once.",
  agent_state: "The agent's state changed; also sent on connect with the current state.",
  memory_update: 'Memory was compacted: old turns folded into the rolling summary.',
  error: 'The turn (or a client frame) failed; the connection stays open.',
  done: 'The last frame of a successful turn.',
  pong: 'The answer to a client `ping`.',
  user_message: 'Starts a turn (like `POST /api/v1/sessions/{id}/messages`). Refused with `TURN_IN_PROGRESS` while a turn runs.',
  tool_confirm: 'Answers a `tool_confirm_request`.',
  ping: 'Keep-alive: send every 30 seconds; the server answers `pong`.',
  cancel: 'Aborts the running turn: the server sends `agent_state idle`, then `error` `CANCELLED`, and no `done`.',
};

const FIELD_MEANINGS: Record<string, string> = {
  'token.text': 'The new text.',
  'token.final': 'True when the token belongs to the final answer (after all tool calls); false for text before a tool call.',
  'tool_start.tool_name': "The tool's name.",
  'tool_start.tool_call_id': 'Unique id of this call; `tool_end` repeats it.',
  'tool_start.input': 'The arguments the model passed.',
  'tool_end.tool_name': "The tool's name.",
  'tool_end.tool_call_id': 'The id from `tool_start`.',
  'tool_end.duration_ms': 'How long the tool ran.',
  'tool_end.error': 'Null on success, else what went wrong.',
  'tool_confirm_request.confirmation_id': 'Opaque; echo it in `tool_confirm`.',
  'tool_confirm_request.tool': 'The tool that wants to run.',
  'tool_confirm_request.parameters': 'Its arguments (large values sorted last).',
  'tool_confirm_request.message': 'A sentence describing what will happen, for the dialog.',
  'agent_state.state': `\`AgentState\`: one of ${AGENT_STATES.map((state) => `\`${state}\``).join(', ')}.`,
  'agent_state.answers': "On a turn's first state only (mid-turn policy `collect`): the ids of the waiting messages this turn answers besides its own.",
  'memory_update.mode': "The session's memory mode.",
  'memory_update.tokens_used': 'Estimated context tokens after the update.',
  'memory_update.summarized': 'True when a summarisation pass ran.',
  'error.code': 'One of the [error codes](./errors.md) (`ErrorCode`, the closed set).',
  'error.message': 'Safe to show to the user.',
  'error.dropped': 'On the `CANCELLED` of a waiting chat message deleted on its platform before its turn started: true.',
  'done.total_tokens': 'Input plus output tokens of the turn.',
  'done.input_tokens': 'Tokens sent to the model (all its calls in the turn).',
  'done.output_tokens': 'Tokens the model generated.',
  'done.tool_calls': 'How many tool calls the turn made.',
  'done.workflow': 'The workflow that answered, or null for the default assistant.',
  'done.routing_reason': 'Why that workflow was picked (metadata, contact, trigger score, session, default).',
  turn_id: 'The turn this frame belongs to: the id of the user message that started it.',
  'user_message.text': 'The message, 1 to 65,536 characters.',
  'user_message.mode': `${TURN_MODES.map((mode) => `\`${mode}\``).join(', ')}; default \`normal\`.`,
  'tool_confirm.confirmation_id': 'From the `tool_confirm_request`.',
  'tool_confirm.action': 'One of the six actions below.',
};

/** The six confirmation actions (spec, tool_confirm) with the key the terminal client uses. */
const ACTION_MEANINGS: Record<string, [key: string, effect: string]> = {
  allow: ['y', 'Run this call, once.'],
  deny: ['n', 'Do not run it; the model is told and may ask again.'],
  allow_all: ['a', 'Run it, and every later call of this tool in the session without asking.'],
  disable: ['d', 'Do not run it, and turn this tool off for the session.'],
  forbid_all: ['f', 'Refuse this and every further tool call of this turn.'],
  cancel: ['c', 'Cancel the whole turn (as the `cancel` frame does).'],
};

/** Close codes the server uses, from the adapters' and auth's constants, with what each means. */
const CLOSE_MEANINGS: Record<number, string> = {
  1000: 'Normal closure.',
  1001: 'Reason `server shutting down`: reconnect (with `last_seq`). Reason `taken over by another connection`, after a `session_taken_over` notice: a newer connection to the same session replaced this one; do not reconnect.',
  1009: `A client frame was larger than ${WEB_ADAPTER_DEFAULTS.maxPayloadBytes.toLocaleString('en-US')} bytes.`,
  1011: 'Internal server error (for example the database failed during the credential check).',
  1013: 'The client read too slowly (too much queued for it); reconnect with `last_seq` to replay what was missed.',
  4000: 'The session registry is not available yet: the server is still starting. Retry.',
  4001: 'Unauthorized: missing, malformed, invalid or expired token, revoked API key, or inactive user.',
  4003: "Forbidden: valid credential but the wrong role (log stream) or not the session's owner.",
  4004: 'No such session (authentication succeeded): unknown id, or archived.',
};

/** Error codes a session socket sends in `error` frames, and when. */
const SOCKET_ERROR_CODES: Record<string, string> = {
  TURN_IN_PROGRESS: 'A `user_message` arrived while a turn runs; the running turn is unaffected.',
  CANCELLED: 'The client cancelled the turn (`cancel` frame, the `cancel` action, or `POST …/cancel`).',
  INVALID_MESSAGE: 'A client frame is not JSON, has an unknown `type`, or cannot be acted on now.',
  VALIDATION_ERROR: "A client frame's payload does not fit its schema (for example an empty `text`).",
  TOOL_EXPANSION_FAILED: 'A tool could not be loaded (unknown, not configured, or the workflow pins its tools).',
  PROVIDER_UNREACHABLE: 'The model server could not be reached or went silent; the turn ends.',
  PROVIDER_ERROR: 'The model server answered with an error or a malformed stream; the turn ends.',
  INTERNAL_ERROR: 'Anything else that went wrong in the turn; details are in the server log.',
};

for (const name of Object.keys(SOCKET_ERROR_CODES)) {
  if (!(ERROR_CODES as readonly string[]).includes(name)) throw new Error(`docs generator: ${name} is not an error code of src/protocol/error-codes.ts`);
}

function describe(key: string, fallback?: string): string {
  const meaning = fallback || FIELD_MEANINGS[key] || FRAME_MEANINGS[key] || FIELD_MEANINGS[key.split('.').pop()!];
  if (!meaning)
    throw new Error(
      `docs generator: ${key} has no description; add a TSDoc comment in src/protocol/frames.ts or an entry in docs/generate/websocket-reference.ts`,
    );
  return meaning;
}

/** Server→client frames: the members of `AgentEvent` and `PongEvent`, read by the TypeScript compiler. */
export function serverFrames(root = repoRoot()): FrameType[] {
  const file = path.join(root, 'src/protocol/frames.ts');
  const program = ts.createProgram([file], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`docs generator: cannot read ${file}`);
  const declaration = (name: string) => {
    const found = source.statements.find(
      (statement): statement is ts.TypeAliasDeclaration | ts.InterfaceDeclaration =>
        (ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement)) && statement.name.text === name,
    );
    if (!found) throw new Error(`docs generator: src/protocol/frames.ts has no ${name}`);
    return checker.getTypeAtLocation(found.name);
  };
  const members = [
    ...(declaration('AgentEvent').isUnion() ? (declaration('AgentEvent') as ts.UnionType).types : [declaration('AgentEvent')]),
    declaration('PongEvent'),
  ];
  return members.map((member) => {
    const typeSymbol = member.getProperty('type');
    const payloadSymbol = member.getProperty('payload');
    if (!typeSymbol || !payloadSymbol) throw new Error('docs generator: an event without `type` or `payload`');
    const literal = checker.getTypeOfSymbol(typeSymbol);
    if (!literal.isStringLiteral()) throw new Error('docs generator: an event whose `type` is not a string literal');
    const payload = checker.getTypeOfSymbol(payloadSymbol);
    const fields = checker.getPropertiesOfType(payload).map((property) => {
      const doc = ts.displayPartsToString(property.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim();
      // The type as written (`ErrorCode`, `AgentState`), not the expanded union of literals.
      const declared = property.declarations?.find((node): node is ts.PropertySignature => ts.isPropertySignature(node))?.type;
      return {
        name: property.name,
        type: declared ? declared.getText().replace(/\s+/g, ' ') : checker.typeToString(checker.getTypeOfSymbol(property)),
        optional: (property.flags & ts.SymbolFlags.Optional) !== 0,
        meaning: describe(`${literal.value}.${property.name}`, doc),
      };
    });
    return { type: literal.value, direction: 'server' as const, meaning: describe(literal.value), fields };
  });
}

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema>; required?: string[]; enum?: unknown[]; minLength?: number; default?: unknown };

/** Client→server frames: the zod schemas the server validates them with (src/protocol/client-frames.ts). */
export function clientFrames(): FrameType[] {
  return Object.entries(clientFrameSchemas).map(([type, schema]) => {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const fields = Object.entries(json.properties ?? {}).map(([name, property]) => ({
      name,
      type: property.enum ? property.enum.map((value) => JSON.stringify(value)).join(' | ') : (property.type ?? 'any'),
      optional: !(json.required ?? []).includes(name),
      meaning: describe(`${type}.${name}`),
    }));
    return { type, direction: 'client' as const, meaning: describe(type), fields };
  });
}

export function confirmationActions(): { action: string; key: string; effect: string }[] {
  const values = (z.toJSONSchema(clientFrameSchemas.tool_confirm) as JsonSchema).properties!.action!.enum as string[];
  return values.map((action) => {
    const entry = ACTION_MEANINGS[action];
    if (!entry) throw new Error(`docs generator: confirmation action ${action} has no description in docs/generate/websocket-reference.ts`);
    return { action, key: entry[0], effect: entry[1] };
  });
}

export function closeCodes(): { code: number; meaning: string }[] {
  const codes = new Set<number>([...Object.values(CLOSE), ...Object.values(CONNECT_CLOSE), ...Object.values(WS_CLOSE), 1009]);
  return [...codes]
    .sort((a, b) => a - b)
    .map((value) => {
      const meaning = CLOSE_MEANINGS[value];
      if (!meaning) throw new Error(`docs generator: close code ${value} has no description in docs/generate/websocket-reference.ts`);
      return { code: value, meaning };
    });
}

function frameSection(frame: FrameType): string {
  const heading = `### \`${frame.type}\``;
  const fields =
    frame.fields.length === 0
      ? 'Payload: `{}`.'
      : table(
          ['Field', 'Type', 'Meaning'],
          frame.fields.map((field) => [code(field.name) + (field.optional ? ' (optional)' : ''), code(field.type), cell(field.meaning)]),
        );
  return [heading, '', frame.meaning, '', fields, ''].join('\n');
}

export function websocketReferencePage(root = repoRoot()): string {
  const server = serverFrames(root);
  const client = clientFrames();
  return [
    generatedBanner('src/protocol/frames.ts (the AgentEvent union), src/protocol/client-frames.ts, the close-code constants of adapters/web and src/auth'),
    '# WebSocket protocol',
    '',
    'Two sockets, both under `/ws/v1`. They authenticate like REST: `Authorization: Bearer <token>` (JWT or',
    '`svc_live_` API key), or from a browser the subprotocol list `bearer, <token>` (the server echoes',
    '`bearer`). The log stream also takes `?token=`.',
    '',
    table(
      ['Path', 'Purpose', 'Query'],
      [
        ['`/ws/v1/sessions/{session_id}`', "A session's stream, both directions", '`last_seq` (integer, optional): replay frames after it'],
        [
          '`/ws/v1/logs`',
          'Live log lines of every process (admins)',
          `\`token\`, \`level\` (${STREAM_LEVELS.map((level) => `\`${level}\``).join(', ')}; default \`INFO\`)`,
        ],
        ['`/ws/v1/approvals`', 'Rings when any approval is opened, counted or decided (signed-in users; the Web UI Approvals page)', '`token`'],
      ],
    ),
    '',
    '## Envelope',
    '',
    'Server to client, on a session socket:',
    '',
    table(
      ['Field', 'Type', 'Meaning'],
      [
        ['`type`', '`string`', 'The frame type (below).'],
        ['`session_id`', '`string`', "The session's UUID."],
        ['`payload`', '`object`', 'Type-specific fields (below).'],
        ['`seq`', '`number`', 'Per session, strictly increasing, kept across reconnects; pass the last one seen as `last_seq` to replay.'],
        ['`ts`', '`string`', 'ISO 8601 UTC time the frame was made.'],
      ],
    ),
    '',
    'Client to server: `{"type": "…", "payload": {…}}`. Clients ignore fields they do not know (turn events may carry `turn_id`).',
    '',
    '## Server to client frames',
    '',
    `Generated from the \`AgentEvent\` union (one vocabulary from the worker to every channel) and \`PongEvent\`: ${server.map((frame) => `\`${frame.type}\``).join(', ')}.`,
    '',
    ...server.map(frameSection),
    '### `session_taken_over` (notice)',
    '',
    'Sent to a session socket alone just before the server closes it with 1001 because a newer connection to the same session took it over: `{"type": "session_taken_over", "session_id", "payload": {}, "ts"}`. It has no `seq` (it is not part of the session\'s numbered frames and is never replayed). A client that receives it does not reconnect; reconnecting would take the session back from the other connection, which would then do the same. A shutdown closes with 1001 too, without this notice, and clients reconnect after it.',
    '',
    '## Client to server frames',
    '',
    `Generated from the zod schemas that validate them: ${client.map((frame) => `\`${frame.type}\``).join(', ')}. A frame that is not JSON or has an unknown type gets an \`error\` frame \`INVALID_MESSAGE\`; a payload that does not fit, \`VALIDATION_ERROR\`. The connection stays open.`,
    '',
    ...client.map(frameSection),
    '### Confirmation actions',
    '',
    table(
      ['`action`', 'Terminal key', 'Effect'],
      confirmationActions().map((entry) => [code(entry.action), code(entry.key), cell(entry.effect)]),
    ),
    '',
    '## The log stream',
    '',
    'Frames on `/ws/v1/logs` have no envelope: `{"type": "log_line", "level", "logger", "message", "timestamp"}`.',
    '`logger` names the process (API or worker). Keep-alive: send the plain text `ping`; the answer is `{"type": "pong"}`.',
    '',
    '## The approvals stream',
    '',
    'Frames on `/ws/v1/approvals` have no envelope: `{"type": "approvals_ready"}` once connected, then `{"type": "approvals_changed"}` whenever an approval is opened, counted, escalated or decided on any process (changes within 50 ms ring once). They carry no approval: read `GET /api/v1/approvals` again, which lists what you may decide. Keep-alive: send the plain text `ping`; the answer is `{"type": "pong"}`.',
    '',
    '## Close codes',
    '',
    table(
      ['Code', 'Meaning'],
      closeCodes().map((entry) => [String(entry.code), cell(entry.meaning)]),
    ),
    '',
    '## Error codes in error frames',
    '',
    "An `error` frame's `code` is one of the [error codes](./errors.md); these are the ones a session socket sends:",
    '',
    table(
      ['Code', 'When'],
      Object.entries(SOCKET_ERROR_CODES).map(([name, when]) => [code(name), cell(when)]),
    ),
    '',
    '## Agent states',
    '',
    `\`agent_state.state\` is one of: ${AGENT_STATES.map((state) => `\`${state}\``).join(', ')}. See [sessions and turns](../concepts/sessions-and-turns.md) for the order they come in.`,
    '',
  ].join('\n');
}
