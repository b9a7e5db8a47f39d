import { runOffThread } from '../offload/off-thread';

export interface PdfLimits {
  /** A PDF still being read after this long is given up (a hostile file can loop pdf.js). */
  timeoutMs: number;
  /** Heap of the worker that reads it, so a hostile file cannot exhaust the hub's memory. */
  maxHeapMb: number;
}

/**
 * The text of a PDF's pages, blank line between pages, read in a worker thread (pdf-task.ts). The
 * content is moved there, not copied: it is empty here afterwards, and its memory must be its own
 * (an upload's is). Rejects with OffThreadTimeout or OffThreadFailure when it cannot be read.
 */
export function pdfText(content: Uint8Array, limits: PdfLimits): Promise<string> {
  return runOffThread<string>(require.resolve('./pdf-task'), 'pdfPagesText', { content }, limits, { transfer: [content.buffer as ArrayBuffer] });
}
