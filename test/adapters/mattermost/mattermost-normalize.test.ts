import type { Post } from '@mattermost/types/posts';
import { actionKey, actionSecret, verifiedChoice } from '../../../adapters/mattermost/confirm-buttons';
import { websocketUrl } from '../../../adapters/mattermost/event-socket';
import { eventMentions, eventPost, isPersonPost, mentionsBot, normalizePost, routingChannelOf, stripMention } from '../../../adapters/mattermost/normalize';
import { mattermostText } from '../../../adapters/mattermost/reply-text';
import { mattermostSettingsSchema } from '../../../adapters/mattermost/settings';

const BOT = { botUserId: 'bot1', botUsername: 'switchboard' };
const post = (fields: Partial<Post>): Post =>
  ({ id: 'p1', user_id: 'u1', channel_id: 'c1', root_id: '', message: 'hi', type: '', delete_at: 0, ...fields }) as Post;
const sender = { displayName: 'Ada', tags: ['team:ops'] };

describe('Mattermost translation', () => {
  it('keys a DM by its channel and every thread by channel and root; a channel mention starts a thread under itself', () => {
    expect(normalizePost(post({ message: 'hello' }), { ...BOT, channelType: 'D' }, sender)!.message.sessionKey).toBe('mattermost::c1');
    expect(normalizePost(post({ root_id: 'r9' }), { ...BOT, channelType: 'D' }, sender)!.message.sessionKey).toBe('mattermost::c1:r9');
    const mention = normalizePost(post({ id: 'p7', message: '@switchboard hello' }), { ...BOT, channelType: 'O' }, sender)!;
    expect(mention).toMatchObject({ rootId: 'p7', postId: 'p7' });
    expect(mention.message).toMatchObject({
      sessionKey: 'mattermost::c1:p7',
      text: 'hello',
      externalId: 'p7',
      sender: { contactId: 'u1', displayName: 'Ada', tags: ['team:ops'] },
    });
    expect(routingChannelOf('c1:p7')).toBe('mattermost:c1');
    expect(routingChannelOf('c1')).toBe('mattermost:c1');
  });

  it('finds mentions of the bot by the event or by the text, and takes them out of the text', () => {
    expect(mentionsBot(post({ message: 'no one' }), { ...BOT, channelType: 'O', mentions: ['bot1'] })).toBe(true);
    expect(mentionsBot(post({ message: 'hey @Switchboard, help' }), { ...BOT, channelType: 'O' })).toBe(true);
    expect(mentionsBot(post({ message: 'mail me at a@switchboard.io' }), { ...BOT, channelType: 'O' })).toBe(false);
    expect(mentionsBot(post({ message: '@switchboard-old help' }), { ...BOT, channelType: 'O' })).toBe(false);
    expect(stripMention('@switchboard: what is up\n```\ncode\n```', 'switchboard')).toBe('what is up\n```\ncode\n```');
    expect(normalizePost(post({ message: '@switchboard' }), { ...BOT, channelType: 'O' }, sender)).toBeNull();
  });

  it("ignores the bot's own posts, other bots' and webhooks', system messages and deleted posts; reads posts and mentions sent as JSON strings", () => {
    expect(isPersonPost(post({}), 'bot1')).toBe(true);
    expect(isPersonPost(post({ user_id: 'bot1' }), 'bot1')).toBe(false);
    expect(isPersonPost(post({ type: 'system_join_channel' as Post['type'] }), 'bot1')).toBe(false);
    expect(isPersonPost(post({ delete_at: 5 }), 'bot1')).toBe(false);
    expect(isPersonPost(post({ props: { from_bot: 'true' } }), 'bot1')).toBe(false);
    expect(isPersonPost(post({ props: { from_webhook: 'true' } }), 'bot1')).toBe(false);
    expect(eventPost({ post: JSON.stringify(post({})) })?.id).toBe('p1');
    expect(eventPost({ post: '{not json' })).toBeNull();
    expect(eventPost({ post: { id: 'p1' } })).toBeNull();
    expect(eventMentions({ mentions: '["bot1",2]' })).toEqual(['bot1']);
    expect(eventMentions({})).toEqual([]);
  });

  it("signs each button's context; a changed action, session or secret does not verify", () => {
    const key = actionKey('token-a');
    const context = {
      session_id: 's1',
      confirmation_id: 'c1',
      action: 'allow',
      tool: 'save_note',
      secret: actionSecret(key, { sessionId: 's1', confirmationId: 'c1', action: 'allow' }),
    };
    expect(verifiedChoice(key, context)).toEqual({ sessionId: 's1', confirmationId: 'c1', action: 'allow', tool: 'save_note' });
    expect(verifiedChoice(key, { ...context, action: 'allow_all' })).toBeNull();
    expect(verifiedChoice(key, { ...context, session_id: 's2' })).toBeNull();
    expect(verifiedChoice(actionKey('token-b'), context)).toBeNull();
    expect(verifiedChoice(key, { ...context, action: 'explode' })).toBeNull();
    expect(verifiedChoice(key, null)).toBeNull();
  });

  it('breaks channel-wide mentions in what the bot posts; derives the socket URL; needs url and token together', () => {
    expect(mattermostText('ping @channel and @all')).toBe('ping @\u200bchannel and @\u200ball');
    expect(websocketUrl('https://chat.example.com/')).toBe('wss://chat.example.com/api/v4/websocket');
    expect(websocketUrl('http://10.0.0.5:8065/mm')).toBe('ws://10.0.0.5:8065/mm/api/v4/websocket');
    expect(mattermostSettingsSchema.safeParse({}).success).toBe(true);
    const half = mattermostSettingsSchema.safeParse({ url: 'https://chat.example.com' });
    expect(half.success).toBe(true); // off: the token is missing, so the channel is not enabled
    const enabled = mattermostSettingsSchema.safeParse({ enabled: true, url: 'https://chat.example.com' });
    expect(enabled.success).toBe(false);
    expect(enabled.error!.issues.map((issue) => issue.path.join('.'))).toEqual(['bot_token']);
    expect(mattermostSettingsSchema.safeParse({ url: 'ftp://chat.example.com' }).success).toBe(false);
  });
});
