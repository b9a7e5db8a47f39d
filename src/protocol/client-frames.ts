import { z } from 'zod';
import { CONFIRM_ACTIONS } from './confirm-actions';
import { TURN_MODES } from './frames';

/** `user_message.payload.text`: 1 to 65,536 characters (spec, Limits), counted as Unicode code points. */
export const USER_MESSAGE_MAX_CHARS = 65_536;

export const userMessageText = z
  .string()
  .refine((text) => text.length > 0, { message: 'Must not be empty.', params: { code: 'too_small' } })
  .refine((text) => text.length <= USER_MESSAGE_MAX_CHARS * 2 && [...text].length <= USER_MESSAGE_MAX_CHARS, {
    message: `Must be at most ${USER_MESSAGE_MAX_CHARS} characters.`,
  })
  // PostgreSQL cannot store U+0000 in text; REST bodies are refused earlier (the server's input guard).
  .refine((text) => !text.includes('\u0000'), { message: 'Must not contain NUL (U+0000) characters.' })
  // A lone UTF-16 surrogate has no UTF-8 form: the stored message would hold U+FFFD instead (REST refuses it in the input guard).
  .refine((text) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text), {
    message: 'Must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair).',
  });

export const turnMode = z.enum(TURN_MODES);

/** The client→server frames of the session WebSocket (spec, Events). */
export const clientFrameSchemas = {
  user_message: z.strictObject({ text: userMessageText, mode: turnMode.default('normal') }),
  tool_confirm: z.strictObject({
    confirmation_id: z.string().min(1),
    action: z.enum(CONFIRM_ACTIONS),
  }),
  ping: z.object({}),
  cancel: z.object({}),
} as const;

export type ClientFrameType = keyof typeof clientFrameSchemas;
export type ClientFrame = { [K in ClientFrameType]: { type: K; payload: z.infer<(typeof clientFrameSchemas)[K]> } }[ClientFrameType];
