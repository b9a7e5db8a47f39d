import {
  messageEventIssues,
  normalizeChange,
  normalizeMessage,
  payloadIssues,
  stripBotMention,
  type SlackMessageEvent,
} from '../../../adapters/slack/normalize';
import { decodeChoice, encodeChoice } from '../../../adapters/slack/confirm-buttons';
import { slackText } from '../../../adapters/slack/render';

const base: SlackMessageEvent = { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text: 'hi', ts: '1.000100', team: 'T1' };
const normalize = (event: Partial<SlackMessageEvent>) =>
  normalizeMessage({ event: { ...base, ...event }, teamId: 'T1', botUserId: 'UBOT', displayName: 'Ada' });

describe('normalize', () => {
  it('keys a DM by conversation, a DM thread and a channel mention by thread', () => {
    expect(normalize({})).toMatchObject({
      channel: 'slack',
      sessionKey: 'slack::T1:D1',
      externalId: 'D1:1.000100',
      sender: { userId: 'channel:slack', contactId: 'U1', displayName: 'Ada' },
    });
    expect(normalize({ thread_ts: '0.5' })?.sessionKey).toBe('slack::T1:D1:0.5');
    expect(normalize({ type: 'app_mention', channel_type: 'channel', channel: 'C1', text: '<@UBOT> /help' })).toMatchObject({
      sessionKey: 'slack::T1:C1:1.000100',
      text: '/help',
    });
  });

  it('ignores bots, edits, our own posts, plain channel messages and empty text', () => {
    expect(normalize({ bot_id: 'B1' })).toBeNull();
    expect(normalize({ subtype: 'message_changed' })).toBeNull();
    expect(normalize({ user: 'UBOT' })).toBeNull();
    expect(normalize({ channel_type: 'channel', channel: 'C1' })).toBeNull();
    expect(normalize({ text: '<@UBOT>' })).toBeNull();
  });

  it("names an edit or deletion of a person's message as the message itself was named", () => {
    const changed = {
      type: 'message' as const,
      subtype: 'message_changed' as const,
      channel: 'D1',
      message: { ts: '1.000100', text: '<@UBOT> fixed', user: 'U1' },
    };
    expect(normalizeChange(changed, 'UBOT')).toEqual({ externalId: normalize({})!.externalId, text: 'fixed' });
    expect(normalizeChange({ type: 'message', subtype: 'message_deleted', channel: 'D1', deleted_ts: '1.000100' }, 'UBOT')).toEqual({
      externalId: 'D1:1.000100',
      text: null,
    });
    expect(normalizeChange({ ...changed, message: { ...changed.message, user: 'UBOT' } }, 'UBOT')).toBeNull(); // our own edits
    expect(normalizeChange({ ...changed, message: { ...changed.message, text: '<@UBOT>' } }, 'UBOT')).toBeNull();
  });

  it('strips only the bot mention', () => {
    expect(stripBotMention('<@UBOT|switchboard> ask <@U2>', 'UBOT')).toBe('ask <@U2>');
  });
});

describe('buttons and text', () => {
  it('round-trips a choice and refuses foreign values', () => {
    const choice = { sessionId: 's', confirmationId: 'c', action: 'allow_all' as const, tool: 'save_note' };
    expect(decodeChoice(encodeChoice(choice))).toEqual(choice);
    expect(decodeChoice('{"s":"s","c":"c","a":"explode","t":"x"}')).toBeNull();
    expect(decodeChoice('not json')).toBeNull();
  });

  it('escapes Slack control characters', () => {
    expect(slackText('a <b> & c')).toBe('a &lt;b&gt; &amp; c');
  });
});

describe('payload shapes (checked before bolt reads them)', () => {
  const message = { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text: 'hi', ts: '1.1' };

  it('takes Slack payloads, whatever their event type', () => {
    expect(payloadIssues({ type: 'event_callback', event: message })).toBeNull();
    expect(payloadIssues({ type: 'event_callback', event: { type: 'reaction_added', user: null } })).toBeNull();
    expect(payloadIssues({ type: 'url_verification', challenge: 'c' })).toBeNull();
    expect(payloadIssues({ type: 'block_actions', actions: [] })).toBeNull();
  });

  it('refuses what is no Slack payload, and message events with fields of the wrong type', () => {
    for (const body of [[], 'x', null, {}, { type: 'nope' }, { type: 'event_callback' }, { type: 'event_callback', event: null }])
      expect(payloadIssues(body)).not.toBeNull();
    expect(Object.keys(payloadIssues({ type: 'event_callback', event: { ...message, user: null } })!)).toEqual(['event.user']);
    expect(Object.keys(messageEventIssues({ ...message, channel: 42, text: {} })!).sort()).toEqual(['event.channel', 'event.text']);
  });
});
