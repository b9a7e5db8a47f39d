import { convert } from 'html-to-text';
import { AppError } from '../core/errors';
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
    details: { accepted: Object.keys(ACCEPTED_TYPES), accepted_media_types: Object.values(ACCEPTED_TYPES), received: { file_name: fileName, media_type: mediaType } },
  });
}

function unreadable(message: string): AppError {
  return AppError.validation({ file: [{ code: 'unreadable_document', message }] }, message);
}

/** The plain text of an uploaded document. Unreadable or empty content is a 422 on `file`. */
export async function extractDocumentText(kind: DocumentKind, content: Buffer): Promise<string> {
  let text: string;
  switch (kind) {
    case 'txt':
    case 'md':
      text = decodeText(content);
      break;
    case 'html':
      text = htmlToText(decodeText(content));
      break;
    case 'pdf':
      text = await pdfToText(content);
      break;
  }
  text = normalise(text);
  if (text === '') throw unreadable('The document contains no text.');
  return text;
}

/** The text of a JSON `{title, text}` document, normalised like an upload; blank is a 422 on `text`. */
export function plainDocumentText(text: string): string {
  const clean = normalise(text);
  if (clean === '') throw AppError.validation({ text: [{ code: 'too_small', message: 'The text is blank.' }] });
  return clean;
}

function decodeText(content: Buffer): string {
  // A NUL byte never occurs in a text file; it is a binary file with a text extension.
  if (content.includes(0)) throw unreadable('The file is binary, not text.');
  return new TextDecoder('utf-8').decode(content);
}

export function htmlToText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', options: { uppercaseHeaderCells: false } },
    ],
  });
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

/** One newline style, no trailing spaces, at most one blank line in a row. */
function normalise(text: string): string {
  return text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
