import type { ContentBlockParam, Tool as AnthropicTool } from '@anthropic-ai/sdk/resources/messages';
import { madeOncePer } from '../../core/made-once';
import type { ChatMessage, ToolSpec } from '../provider';

/**
 * The Messages request as JSON text, `{model, max_tokens, messages, stream[, system][, tools]}`, as
 * `messages.create` would send it. The system prompt goes apart; tool results travel as
 * `tool_result` blocks of a user message, and consecutive user-side content is merged so every
 * tool_use is answered in the very next message. Each message's content blocks are serialised once
 * per message object (as the OpenAI provider's requestBody does: the worker hands a conversation back
 * turn after turn as the same objects), so a turn serialises only its new messages; the SDK's
 * `JSON.stringify` of the whole body was ~80 µs a turn under the bench's turn load.
 */
export function anthropicRequestBody(model: string, maxTokens: number, messages: readonly ChatMessage[], tools: readonly ToolSpec[] | undefined): string {
  const system: string[] = [];
  const grouped: string[] = [];
  let role: 'user' | 'assistant' | null = null;
  let blocks: string[] = [];
  const close = () => {
    if (role) grouped.push(`{"role":"${role}","content":[${blocks.join(',')}]}`);
  };
  for (const message of messages) {
    if (message.role === 'system') {
      system.push(message.content);
      continue;
    }
    const json = blocksJson(message);
    if (json === '') continue; // the API refuses empty text blocks: a message without content sends none
    const side = message.role === 'assistant' ? 'assistant' : 'user';
    if (side !== role) {
      close();
      role = side;
      blocks = [];
    }
    blocks.push(json);
  }
  close();
  const systemText = system.join('\n\n');
  const systemField = systemText ? `,"system":${JSON.stringify(systemText)}` : '';
  const toolParts = (tools ?? []).map(toolJson);
  const toolsField = toolParts.length > 0 ? `,"tools":[${toolParts.join(',')}]` : '';
  return `{"model":${JSON.stringify(model)},"max_tokens":${maxTokens},"messages":[${grouped.join(',')}],"stream":true${systemField}${toolsField}}`;
}

/** A message's content blocks as JSON, comma-separated ('' for none). */
const blocksJson = madeOncePer((message: ChatMessage) =>
  contentBlocks(message)
    .map((block) => JSON.stringify(block))
    .join(','),
);

const toolJson = madeOncePer((tool: ToolSpec) => {
  const param: AnthropicTool = {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.parameters } as AnthropicTool.InputSchema,
  };
  return JSON.stringify(param);
});

function contentBlocks(message: ChatMessage): ContentBlockParam[] {
  switch (message.role) {
    case 'system':
      return [];
    case 'user':
      return message.content ? [{ type: 'text', text: message.content }] : [];
    case 'assistant': {
      const blocks: ContentBlockParam[] = message.content ? [{ type: 'text', text: message.content }] : [];
      for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) });
      return blocks;
    }
    case 'tool':
      return [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content }];
  }
}

/**
 * `tool_use.input` must be an object. A call whose arguments were not valid JSON still has to be
 * sent back (its tool_result, an error, answers it), so its input becomes an empty object.
 */
function parseInput(argumentsText: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
