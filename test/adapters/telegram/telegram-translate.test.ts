import { decodeCallbackData, encodeCallbackData } from '../../../adapters/telegram/callback-data';
import { normalizeCommand, normalizeEdit, normalizeUpdate } from '../../../adapters/telegram/normalize';
import { streamingView } from '../../../adapters/telegram/render';
import { splitMessage } from '../../../adapters/telegram/split';

/** The pure translations: updates in, texts and button data out. */
const base = {
  update_id: 9,
  message: { message_id: 1, date: 0, chat: { id: 5, type: 'private', first_name: 'Ada' }, from: { id: 77, is_bot: false, first_name: 'Ada' }, text: 'hi' },
};

it('normalises a text message and ignores edits, non-text, bots and channel posts', () => {
  expect(normalizeUpdate(base as any, 'Bot')).toMatchObject({
    chatId: 5,
    messageId: 1,
    message: {
      channel: 'telegram',
      sessionKey: 'telegram::5',
      sender: { userId: 'channel:telegram', contactId: '77', displayName: 'Ada' },
      text: 'hi',
      externalId: '5:1',
    },
  });
  // The message's identity, not the update's: a redelivered update and a later edit both name it.
  expect(normalizeUpdate({ ...base, update_id: 99 } as any, 'Bot')!.message.externalId).toBe('5:1');
  expect(normalizeUpdate({ update_id: 10, edited_message: base.message } as any, 'Bot')).toBeNull();
  expect(normalizeEdit({ update_id: 10, edited_message: { ...base.message, text: '/info@Bot now' } } as any, 'Bot')).toEqual({
    externalId: '5:1',
    text: '/info now',
  });
  expect(normalizeEdit(base as any, 'Bot')).toBeNull();
  expect(normalizeUpdate({ ...base, message: { ...base.message, text: undefined, sticker: {} } } as any, 'Bot')).toBeNull();
  expect(normalizeUpdate({ ...base, message: { ...base.message, from: { id: 8, is_bot: true, first_name: 'Other' } } } as any, 'Bot')).toBeNull();
  expect(normalizeUpdate({ update_id: 11, channel_post: { ...base.message, chat: { id: -1, type: 'channel' } } } as any, 'Bot')).toBeNull();
});

it('strips this bot from group commands and leaves other bots’ commands alone', () => {
  expect(normalizeCommand('/tools@MyBot load lookup', 'mybot')).toBe('/tools load lookup');
  expect(normalizeCommand('/info@OtherBot', 'MyBot')).toBeNull();
  expect(normalizeCommand('mail me@example.com', 'MyBot')).toBe('mail me@example.com');
});

it('packs session, confirmation and action into at most 64 bytes and back', () => {
  const session = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const confirmation = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const data = encodeCallbackData(session, confirmation, 'forbid_all');
  expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
  expect(decodeCallbackData(data)).toEqual({ sessionId: session, confirmationId: confirmation, action: 'forbid_all' });
  expect(decodeCallbackData('c:short:short:1')).toBeNull();
  expect(decodeCallbackData(data.replace(/:4$/, ':9'))).toBeNull();
});

it('splits long answers within the limit, at line breaks when possible, losing nothing', () => {
  const text = `${'a'.repeat(30)}\n${'b'.repeat(30)}\n${'c'.repeat(10)}`;
  const pieces = splitMessage(text, 40);
  expect(pieces).toEqual(['a'.repeat(30), 'b'.repeat(30), 'c'.repeat(10)]);
  const long = 'x'.repeat(9000);
  expect(splitMessage(long, 4096).map((piece) => piece.length)).toEqual([4096, 4096, 808]);
  expect(streamingView('y'.repeat(5000), 4096)).toHaveLength(4096);
});
