import { extractText, getDocumentProxy } from 'unpdf';

/**
 * A PDF's text, page by page with a blank line between pages. Runs in a worker thread (pdf-text.ts
 * starts it): pdf.js (through unpdf) is CPU-heavy, and a hostile file can loop it.
 */
export async function pdfPagesText(input: { content: Uint8Array }): Promise<string> {
  const pdf = await getDocumentProxy(input.content, { verbosity: 0 });
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    return text.join('\n\n');
  } finally {
    await pdf.destroy();
  }
}
