import { updateIssues } from '../../../adapters/telegram/webhook';

describe('Telegram update shapes', () => {
  const message = { message_id: 1, date: 1, chat: { id: 5, type: 'private' }, from: { id: 5, is_bot: false, first_name: 'A' }, text: 'hi' };

  it('takes updates of every kind; only the fields the adapter reads are checked', () => {
    expect(updateIssues({ update_id: 1, message })).toBeNull();
    expect(updateIssues({ update_id: 2, channel_post: { anything: true } })).toBeNull();
    expect(updateIssues({ update_id: 3, message: { ...message, text: undefined, photo: [] } })).toBeNull();
  });

  it('refuses bodies that are no update, naming the field', () => {
    expect(Object.keys(updateIssues({ message })!)).toEqual(['update_id']);
    expect(Object.keys(updateIssues({ update_id: 1, message: 'x' })!)).toEqual(['message']);
    expect(Object.keys(updateIssues({ update_id: 1, message: { ...message, chat: null } })!)).toEqual(['message.chat']);
    expect(Object.keys(updateIssues({ update_id: 1, callback_query: { id: 'q', from: null } })!)).toEqual(['callback_query.from']);
    expect(updateIssues([])).not.toBeNull();
  });
});
