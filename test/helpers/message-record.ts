import type { MessageRecord } from '../../src/db/turn-store';

/** A stored message as the turn store reads it: a short user message of no turn unless `fields` say otherwise. */
export function messageRecord(fields: Partial<MessageRecord> & Pick<MessageRecord, 'id' | 'ordinal'>): MessageRecord {
  return {
    session_id: 's',
    role: 'user',
    content: 'hello there',
    tool_calls: [],
    input_tokens: 0,
    output_tokens: 0,
    token_count: null,
    workflow_id: null,
    mode: null,
    metadata: {},
    reply_to: null,
    turn_id: null,
    sender: null,
    created_at: new Date(0),
    ...fields,
  };
}
