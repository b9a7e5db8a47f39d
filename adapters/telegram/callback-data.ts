import { CONFIRM_ACTIONS, type ConfirmAction } from '../shared/confirm-actions';

export { CONFIRM_ACTIONS, type ConfirmAction };

/** Telegram refuses `callback_data` longer than 64 bytes. */
export const MAX_CALLBACK_BYTES = 64;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A button's data: which session, which confirmation, which action. Both ids are UUIDs, 36
 * characters each as text — too long together for 64 bytes — so they travel as base64url of their 16
 * bytes (22 characters). The session id is in it because a click may reach any API process, with no
 * memory of the chat. Format: `c:<session>:<confirmation>:<action index>` (49 bytes).
 */
export function encodeCallbackData(sessionId: string, confirmationId: string, action: ConfirmAction): string {
  const data = `c:${compactUuid(sessionId)}:${compactUuid(confirmationId)}:${CONFIRM_ACTIONS.indexOf(action)}`;
  if (Buffer.byteLength(data) > MAX_CALLBACK_BYTES) throw new Error('callback data over 64 bytes');
  return data;
}

export function decodeCallbackData(data: string): { sessionId: string; confirmationId: string; action: ConfirmAction } | null {
  const parts = data.split(':');
  if (parts.length !== 4 || parts[0] !== 'c') return null;
  const action = CONFIRM_ACTIONS[Number(parts[3])];
  const sessionId = expandUuid(parts[1]!);
  const confirmationId = expandUuid(parts[2]!);
  if (!action || !sessionId || !confirmationId || !/^\d$/.test(parts[3]!)) return null;
  return { sessionId, confirmationId, action };
}

function compactUuid(uuid: string): string {
  if (!UUID.test(uuid)) throw new Error('expected a UUID');
  return Buffer.from(uuid.replaceAll('-', ''), 'hex').toString('base64url');
}

function expandUuid(compact: string): string | null {
  if (!/^[A-Za-z0-9_-]{22}$/.test(compact)) return null;
  const hex = Buffer.from(compact, 'base64url').toString('hex');
  if (hex.length !== 32) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
