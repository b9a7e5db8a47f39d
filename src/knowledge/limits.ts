/** Every limit of the knowledge module, in one place (docs/decisions.md, "Knowledge"). */
export const KNOWLEDGE_DEFAULTS = {
  /** Largest uploaded file (issue 7): 20 MiB. A bigger one is refused with 413 while streaming. */
  maxFileBytes: 20 * 1024 * 1024,
  /** Room for multipart boundaries and small fields when checking a declared Content-Length up front. */
  multipartOverheadBytes: 64 * 1024,
  /**
   * After refusing an upload, the rest of the request is read and thrown away (so the client sees the
   * 413 instead of a reset connection), but only this much; beyond it the connection is cut.
   */
  maxDrainBytes: 64 * 1024 * 1024,
  /** Reading one PDF (in a worker thread) is given up after this long: 422. */
  pdfTimeoutMs: 60_000,
  /** Heap limit of the PDF reader's worker thread. */
  pdfMaxHeapMb: 512,
  /**
   * Turning a document into text and chunks (in a worker thread, off the event loop) is given up
   * after this long: 422. A 20 MiB text file takes ~20 s here.
   */
  prepareTimeoutMs: 120_000,
  /** Heap of that worker: a 20 MiB file, its text and its chunks fit several times over. */
  prepareMaxHeapMb: 1024,
  /** Chunk rows written per INSERT: a statement for a whole 20 MiB document is megabytes built at once. */
  insertBatchRows: 500,
  /**
   * Chunk text written per INSERT: building a statement escapes every character of it on the event
   * loop (500 rows of a 4 MiB file were 1.7 MB and held the loop ~50 ms on a 2-core machine).
   */
  insertBatchChars: 128 * 1024,
  /** Largest multipart text field (`title`). */
  maxFieldBytes: 1024,
  /** Target size of a chunk, in tokens (o200k): small enough to quote, large enough to carry context. */
  chunkTokens: 200,
  /** Tokens of the previous chunk repeated at the start of the next, so a sentence cut at a border is found whole. */
  chunkOverlapTokens: 40,
  /** Longest title; a longer file name is cut. */
  maxTitleChars: 300,
  /** Longest query. */
  maxQueryChars: 1000,
  /** Default and largest `top_k`. */
  defaultTopK: 5,
  maxTopK: 50,
} as const;

/** What an upload may be, by file name extension; the media type is the fallback. */
export const ACCEPTED_TYPES = {
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
  pdf: 'application/pdf',
} as const;

export type DocumentKind = keyof typeof ACCEPTED_TYPES;
