import { APOLOGY_TEXT } from '../../../adapters/shared/chat-texts';
import { startWebchatHarness, Widget } from '../../adapters/webchat/webchat-harness';
import { request } from '../../helpers/http';
import type { ChannelUnderTest, Conversation } from './channel-under-test';

/** The website widget: socket.io-client doing what rasa-webchat does; a widget session per conversation. */
export async function startWebchat(): Promise<ChannelUnderTest> {
  const h = await startWebchatHarness({ confirmations: 'buttons' });
  // Visitors get only the tools a webchat workflow pins (issue 26): one for the notes the suite saves.
  await h.admin('POST', '/assistant/workflows', {
    name: 'visitor-notes',
    tool_list: 'save_note',
    triggers: { keywords: ['note'] },
    binding_channels: ['webchat'],
  });
  const widgets: Widget[] = [];

  const conversation = async (): Promise<Conversation> => {
    const widget = await Widget.open(h.base);
    widgets.push(widget);
    // The random half of the widget's signed id names the conversation (adapters/webchat/session-ids.ts).
    const key = `webchat::${widget.sessionId!.slice(0, 32)}`;
    const texts = () => widget.messages.map((message) => message.text);
    const until = (condition: () => boolean, what: string, timeoutMs = 10_000) =>
      Promise.race([
        widget.until(condition),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`timed out waiting for ${what}; widget got ${JSON.stringify(texts())}`)), timeoutMs).unref(),
        ),
      ]);
    let answeredBefore = 0;
    return {
      expectedKey: key,
      expectedBinding: 'webchat',
      sessionId: async () => {
        const sessions = await request(`${h.api}/sessions?limit=100`, { headers: { authorization: `Bearer ${h.adminToken}` } });
        return sessions.body.data.items.find((item: any) => item.session_key === key).id;
      },
      send: async (text) => {
        answeredBefore = widget.messages.length;
        const typingBefore = widget.typing.length;
        widget.say(text);
        // Taken in: the hub shows the visitor it is working (or answers at once).
        await until(() => widget.typing.length > typingBefore || widget.messages.length > answeredBefore, 'the hub to take the message in');
        return null;
      },
      showsWorking: async () => {
        await until(() => widget.typing.at(-1) === true, 'the typing indicator');
        if (widget.messages.length > answeredBefore) throw new Error('an answer was shown already: nothing was under way');
      },
      showsAnswer: async (text) => {
        await until(() => widget.messages.slice(answeredBefore).some((message) => message.text === text), `"${text}"`);
      },
      confirmation: async () => {
        await until(() => widget.messages.slice(answeredBefore).some((message) => (message.quick_replies?.length ?? 0) > 0), 'a confirmation');
        const asked = widget.messages.slice(answeredBefore).find((message) => (message.quick_replies?.length ?? 0) > 0)!;
        const replies = asked.quick_replies!;
        const actionOf = (payload: string) => /"action":"([a-z_]+)"/.exec(payload)?.[1] ?? '?';
        return {
          offered: replies.map((reply) => actionOf(reply.payload)),
          answer: async (action) => {
            answeredBefore = widget.messages.length;
            widget.say(replies.find((reply) => actionOf(reply.payload) === action)!.payload);
          },
        };
      },
      failureShown: async () => {
        await until(() => texts().includes(APOLOGY_TEXT), 'the apology');
        return APOLOGY_TEXT;
      },
      shown: texts,
    };
  };

  return {
    name: 'webchat',
    provider: h.provider,
    tools: h.tools,
    api: h.api,
    adminToken: h.adminToken,
    conversation,
    stop: async () => {
      for (const widget of widgets) widget.close();
      await h.stop();
    },
  };
}
