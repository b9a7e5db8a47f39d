const FENCE = /^ {0,3}(```|~~~)/;

/**
 * Cuts the complete paragraphs off the front of streamed text: a paragraph ends at a blank line
 * outside a fenced code block (a blank line inside one belongs to the code). The text after the last
 * such break stays in `rest`: more of it may still stream.
 */
export function takeParagraphs(buffer: string): { paragraphs: string[]; rest: string } {
  const paragraphs: string[] = [];
  let fence: string | null = null;
  let start = 0;
  let offset = 0;
  for (const line of buffer.split('\n').slice(0, -1)) {
    const end = offset + line.length + 1;
    const marker = FENCE.exec(line)?.[1] ?? null;
    if (marker && (fence === null || fence === marker)) fence = fence === null ? marker : null;
    else if (fence === null && line.trim() === '') {
      const paragraph = buffer.slice(start, offset).trim();
      if (paragraph) paragraphs.push(paragraph);
      start = end;
    }
    offset = end;
  }
  return { paragraphs, rest: buffer.slice(start) };
}

/** Text as messages: one per paragraph (`perParagraph`), or one for the whole text; none for blank text. */
export function textPieces(text: string, perParagraph: boolean): string[] {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (!perParagraph) return [trimmed];
  const { paragraphs, rest } = takeParagraphs(`${trimmed}\n\n`);
  return [...paragraphs, rest.trim()].filter(Boolean);
}
