import { AppError } from '../core/errors';
import { HTML_MAX_DEPTH } from '../offload/html-text';
import { OffThreadTimeout, runOffThread } from '../offload/off-thread';
import type { DocumentTaskInput, DocumentTaskResult } from './document-task';
import { ACCEPTED_TYPES, KNOWLEDGE_DEFAULTS, type DocumentKind } from './limits';
import { pdfText } from './pdf-text';

const EXTENSIONS: Record<string, DocumentKind> = { txt: 'txt', text: 'txt', md: 'md', markdown: 'md', html: 'html', htm: 'html', pdf: 'pdf' };
const MEDIA_TYPES: Record<string, DocumentKind> = {
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

/** The accepted types, as named in 415 answers. */
export const ACCEPTED_DESCRIPTION = `${Object.keys(ACCEPTED_TYPES).join(', ')} (${Object.values(ACCEPTED_TYPES).join(', ')})`;

/**
 * Which kind of document an upload is: by its file name's extension, else by its declared media
 * type (clients often send `application/octet-stream`, so the name is the better witness).
 * Anything else is a 415 naming the accepted types.
 */
export function documentKind(fileName: string | null, mediaType: string | null): DocumentKind {
  const extension = fileName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (extension && EXTENSIONS[extension]) return EXTENSIONS[extension];
  const type = mediaType?.split(';')[0].trim().toLowerCase();
  if (type && MEDIA_TYPES[type]) return MEDIA_TYPES[type];
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Upload a document of an accepted type: ${ACCEPTED_DESCRIPTION}.`, {
    details: {
      accepted: Object.keys(ACCEPTED_TYPES),
      accepted_media_types: Object.values(ACCEPTED_TYPES),
      received: { file_name: fileName, media_type: mediaType },
    },
  });
}

function unreadable(message: string, code = 'unreadable_document'): AppError {
  return AppError.validation({ file: [{ code, message }] }, message);
}

/** A document's passages, ready to store. */
export interface PreparedDocument {
  chunks: string[];
}

/**
 * The chunks of an uploaded document, prepared off the event loop (document-task.ts in a worker
 * thread; a PDF is read in a worker of its own first). Unreadable, empty or over-deep content is a
 * 422 on `file`; a document that takes longer than KNOWLEDGE_DEFAULTS.prepareTimeoutMs is a 422 too
 * (it is too large or too convoluted to index). `content` is moved to the worker, not copied: it is
 * empty afterwards, and its memory must be its own (readUpload's is), never Node's shared pool.
 */
export async function prepareUpload(kind: DocumentKind, content: Buffer): Promise<PreparedDocument> {
  if (kind === 'pdf') return prepare({ kind: 'plain', text: await pdfToText(content), field: 'file', maxDepth: HTML_MAX_DEPTH });
  return prepare({ kind, content, field: 'file', maxDepth: HTML_MAX_DEPTH }, [content.buffer as ArrayBuffer]);
}

/** A JSON `{title, text}` document, normalised and chunked like an upload; blank is a 422 on `text`. */
export function preparePlainDocument(text: string): Promise<PreparedDocument> {
  return prepare({ kind: 'plain', text, field: 'text', maxDepth: HTML_MAX_DEPTH });
}

/** `transfer`: the input's buffers, moved to the worker rather than copied (the caller's views of them empty). */
async function prepare(input: DocumentTaskInput, transfer: ArrayBuffer[] = []): Promise<PreparedDocument> {
  let result: DocumentTaskResult;
  const chunks: string[] = [];
  try {
    result = await runOffThread<DocumentTaskResult>(
      require.resolve('./document-task'),
      'prepareDocument',
      input,
      { timeoutMs: KNOWLEDGE_DEFAULTS.prepareTimeoutMs, maxHeapMb: KNOWLEDGE_DEFAULTS.prepareMaxHeapMb },
      { transfer, onPart: (batch) => chunks.push(...(batch as string[])) },
    );
  } catch (error) {
    const message =
      error instanceof OffThreadTimeout
        ? `Reading the document took longer than ${KNOWLEDGE_DEFAULTS.prepareTimeoutMs / 1000} s.`
        : 'The document could not be read.';
    throw new AppError('VALIDATION_ERROR', message, { details: { fields: { file: [{ code: 'unreadable_document', message }] } }, cause: error });
  }
  if (!result.ok) {
    if (result.field === 'text') throw AppError.validation({ text: [{ code: result.code, message: result.message }] });
    throw unreadable(result.message, result.code);
  }
  if (chunks.length !== result.chunkCount) throw new Error(`the document task emitted ${chunks.length} of its ${result.chunkCount} chunks`);
  return { chunks };
}

async function pdfToText(content: Buffer): Promise<string> {
  if (content.subarray(0, 5).toString('latin1') !== '%PDF-') throw unreadable('The file is not a PDF.');
  try {
    return await pdfText(content, { timeoutMs: KNOWLEDGE_DEFAULTS.pdfTimeoutMs, maxHeapMb: KNOWLEDGE_DEFAULTS.pdfMaxHeapMb });
  } catch (error) {
    throw new AppError('VALIDATION_ERROR', 'The PDF could not be read.', {
      details: { fields: { file: [{ code: 'unreadable_document', message: 'The PDF could not be read.' }] } },
      cause: error,
    });
  }
}
