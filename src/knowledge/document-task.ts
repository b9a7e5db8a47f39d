import { convertHtml } from '../offload/html-text';
import type { OffThreadTaskIo } from '../offload/off-thread';
import { textBatches } from './batches';
import { chunkText } from './chunk';

/**
 * Turning an upload into indexed passages — decoding, HTML to text, normalising, cutting into
 * token-counted chunks — costs seconds on a large or hostile file (20 MiB of text: ~20 s of
 * tokenising; 1 MB of nested `<div>`: a stack overflow). It runs here, in a worker thread
 * (extract.ts starts it), never on the event loop.
 */
export interface DocumentTaskInput {
  /** `plain`: text already extracted (a PDF's, or a JSON document's). */
  kind: 'txt' | 'md' | 'html' | 'plain';
  content?: Uint8Array;
  text?: string;
  /** Where a blank document is refused: the upload's `file`, or a JSON document's `text`. */
  field: 'file' | 'text';
  maxDepth: number;
}

/** On success the chunks were emitted (`io.emit`) in batches of `string[]`, `chunkCount` in all. */
export type DocumentTaskResult = { ok: true; chunkCount: number } | { ok: false; field: 'file' | 'text'; code: string; message: string };

export async function prepareDocument(input: DocumentTaskInput, io: OffThreadTaskIo): Promise<DocumentTaskResult> {
  let text: string;
  if (input.kind === 'plain') {
    text = input.text ?? '';
  } else {
    const content = Buffer.from(input.content ?? new Uint8Array());
    // A NUL byte never occurs in a text file; it is a binary file with a text extension.
    if (content.includes(0)) return { ok: false, field: 'file', code: 'unreadable_document', message: 'The file is binary, not text.' };
    text = new TextDecoder('utf-8').decode(content);
    if (input.kind === 'html') {
      const page = convertHtml({ html: text, maxDepth: input.maxDepth, keepLinks: false });
      if (page.tooDeep)
        return { ok: false, field: 'file', code: 'too_deep', message: `The HTML nests elements deeper than ${input.maxDepth} levels; no real document does.` };
      text = page.text;
    }
  }
  text = normaliseText(text);
  if (text === '') {
    return input.field === 'text'
      ? { ok: false, field: 'text', code: 'too_small', message: 'The text is blank.' }
      : { ok: false, field: 'file', code: 'unreadable_document', message: 'The document contains no text.' };
  }
  const chunks = chunkText(text);
  // In batches, each taken by the hub before the next is sent: one message of a large document's
  // chunks is a copy of megabytes on the hub's event loop.
  for (const batch of textBatches(chunks, (chunk) => chunk)) await io.emit(batch);
  return { ok: true, chunkCount: chunks.length };
}

/**
 * One newline style, no trailing spaces, at most one blank line in a row. Line by line: a regex for
 * trailing blanks (`/[ \t]+$/gm`) is quadratic on a long run of spaces that does not end its line.
 */
export function normaliseText(text: string): string {
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r\n?|\n/)
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
