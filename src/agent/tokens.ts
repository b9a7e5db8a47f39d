import { countTokens as count, decodeGenerator, encode } from 'gpt-tokenizer';

/** Token count of a text with the o200k encoding (gpt-tokenizer's default): real counts, offline. */
export function countTokens(text: string): number {
  return text === '' ? 0 : count(text);
}

/** The text cut at token boundaries, as a streaming model would emit it (multi-byte safe). */
export function* tokenPieces(text: string): Generator<string> {
  if (text === '') return;
  yield* decodeGenerator(encode(text));
}
