import pino from 'pino';
import { decodeChoice } from '../../../adapters/slack/confirm-buttons';
import { slackSurface } from '../../../adapters/slack/render';
import { WorkspaceRefusals } from '../../../adapters/slack/refusals';
import type { SlackCalls } from '../../../adapters/slack/slack-outbox';
import type { SurfaceHarness } from './reply-surface-contract';

interface Message {
  ts: string;
  text: string;
  blocks?: { elements?: { value?: string }[] }[];
}

/**
 * Slack's reply surface over a recording of Slack's Web API (the SlackCalls port the outbox
 * implements): messages posted, edited and streamed as a thread shows them, statuses set. A thread
 * reply, native streaming and thread status on: the way most Slack answers go.
 */
export const slackSurfaces: SurfaceHarness = {
  name: 'slack',
  conversation() {
    const messages: Message[] = [];
    const statuses: string[] = [];
    let next = 1;
    const find = (ts: unknown) => messages.find((message) => message.ts === ts)!;
    const write = async (method: string, args: Record<string, unknown>) => {
      const text = String(args.markdown_text ?? args.text ?? '');
      switch (method) {
        case 'chat.postMessage':
        case 'chat.startStream': {
          const ts = `171.${next++}`;
          messages.push({ ts, text, blocks: args.blocks as Message['blocks'] });
          return { ok: true, ts };
        }
        case 'chat.appendStream':
        case 'chat.stopStream':
          find(args.ts).text += text;
          return { ok: true };
        case 'chat.update':
          find(args.ts).text = text;
          return { ok: true };
        default:
          throw new Error(`unexpected ${method}`);
      }
    };
    const calls: SlackCalls = {
      workspace: 'T1',
      refusals: new WorkspaceRefusals(),
      send: write,
      trySend: write,
      extra: async (_feature, method, args) => {
        if (method === 'assistant.threads.setStatus') statuses.push(String(args.status));
        return true;
      },
    };
    const surface = slackSurface(
      calls,
      { channel: 'C1', threadTs: '170.1', recipient: { userId: 'U1', teamId: 'T1' } },
      { editIntervalMs: 20, nativeStreaming: true, threadStatus: true, logger: pino({ level: 'silent' }) },
    );
    return {
      surface,
      shown: () => messages.map((message) => message.text),
      offered: () => {
        const buttons = messages.flatMap((message) => message.blocks ?? []).flatMap((block) => block.elements ?? []);
        return buttons.map((button) => decodeChoice(button.value)?.action ?? '?');
      },
      showedWork: () => statuses.some((status) => status !== ''),
    };
  },
};
