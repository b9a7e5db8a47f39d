import { clientFrameSchemas, type ClientFrame, type ClientFrameType } from '../../src/core/client-frames';
import type { ErrorCode } from '../../src/core/errors';

type ParsedFrame = ClientFrame | { error: { code: ErrorCode; message: string } };

/** A client frame's text checked against the protocol's client frames, or the error to answer it with. */
export function parseClientFrame(text: string | null): ParsedFrame {
  if (text === null) return { error: { code: 'INVALID_MESSAGE', message: 'Frames must be JSON text, not binary.' } };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: { code: 'INVALID_MESSAGE', message: 'The frame is not valid JSON.' } };
  }
  if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
    return { error: { code: 'INVALID_MESSAGE', message: 'A frame is an object {type, payload}.' } };
  }
  const { type, payload } = value as { type: string; payload?: unknown };
  if (!Object.hasOwn(clientFrameSchemas, type)) {
    return { error: { code: 'INVALID_MESSAGE', message: `Unknown frame type "${type}"; expected user_message, tool_confirm, ping or cancel.` } };
  }
  const result = clientFrameSchemas[type as ClientFrameType].safeParse(payload ?? {});
  if (!result.success) {
    const detail = result.error.issues.map((issue) => `${['payload', ...issue.path].join('.')}: ${issue.message}`).join('; ');
    return { error: { code: 'VALIDATION_ERROR', message: `Invalid ${type}: ${detail}` } };
  }
  return { type, payload: result.data } as ClientFrame;
}
