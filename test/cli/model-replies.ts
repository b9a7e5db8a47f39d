import { openAiChunk, openAiTextReply } from '../fakes/openai-server';
import type { ScriptedReply } from '../fakes/scripted-http-server';

let callCounter = 0;

/** A streamed answer, one event per word (`delayMs` between them, so a test can act mid-stream). */
export function answer(text: string, delayMs = 0): ScriptedReply {
  return answerInPieces(text.match(/\S+\s*/g) ?? [text], delayMs);
}

/** A streamed answer in exactly these pieces. */
export function answerInPieces(pieces: string[], delayMs = 0): ScriptedReply {
  const reply = openAiTextReply(pieces);
  if (reply.kind !== 'stream') throw new Error('openAiTextReply streams');
  return { ...reply, delayMs };
}

/** One model round that calls tools (all in the same round, so they run in parallel). */
export function toolCalls(...calls: { name: string; args: Record<string, unknown> }[]): ScriptedReply {
  return {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      ...calls.map((call, index) => {
        callCounter += 1;
        return openAiChunk.toolCall({
          index,
          id: `call_cli_${callCounter}`,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args) },
        });
      }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.usage(20, 10),
      openAiChunk.done(),
    ],
  };
}

/** `write_file` of `path` (it requires a confirmation). */
export function writeFile(path: string, content = `contents of ${path}`): { name: string; args: Record<string, unknown> } {
  return { name: 'write_file', args: { path, content } };
}

/** What the fake model server needs in the hub's environment. */
export function modelEnv(baseUrl: string): Record<string, string> {
  return { SERVICE_LLM_PROVIDER: 'openai', SERVICE_LLM_BASE_URL: baseUrl, SERVICE_LLM_MODEL: 'fake-model' };
}
