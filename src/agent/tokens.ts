import { countTokens as count, decodeGenerator, encode } from 'gpt-tokenizer';

/**
 * Longest run without whitespace counted in one piece. BPE merging is quadratic in the length of a
 * "word": 65,536 characters without a space take ~7 s and block the event loop (a message can be
 * that). Longer runs are counted in pieces of this size — a count off by at most a token per piece.
 */
export const TOKENIZER_MAX_RUN = 512;

const LONG_RUN = new RegExp(`(\\S{${TOKENIZER_MAX_RUN}})`);

/** Token count of a text with the o200k encoding (gpt-tokenizer's default): real counts, offline. */
export function countTokens(text: string): number {
  if (text === '') return 0;
  if (!LONG_RUN.test(text)) return count(text);
  // split with a capture group keeps the long pieces as their own entries
  return text.split(LONG_RUN).reduce((sum, piece) => sum + (piece === '' ? 0 : count(piece)), 0);
}

/** The text cut at token boundaries, as a streaming model would emit it (multi-byte safe). */
export function* tokenPieces(text: string): Generator<string> {
  if (text === '') return;
  for (const piece of LONG_RUN.test(text) ? text.split(LONG_RUN) : [text]) {
    if (piece !== '') yield* decodeGenerator(encode(piece));
  }
}
