import busboy from 'busboy';
import type { Request } from 'express';
import { AppError } from '../core/errors';
import { KNOWLEDGE_DEFAULTS } from './limits';

export interface Upload {
  fileName: string | null;
  mediaType: string | null;
  /** The file; its memory is its own (never Node's shared buffer pool), so it can be moved to a worker thread. */
  content: Buffer;
  /** The optional `title` form field. */
  title: string | null;
}

export interface UploadLimits {
  maxFileBytes: number;
  multipartOverheadBytes: number;
  maxDrainBytes: number;
  maxFieldBytes: number;
}

const DEFAULT_LIMITS: UploadLimits = KNOWLEDGE_DEFAULTS;

/**
 * Reads a `multipart/form-data` body with one `file` part (and an optional `title` field), streaming:
 * a declared Content-Length over the limit is refused before reading, and a file that grows past it
 * is refused the moment it does — the upload is never held whole beyond the limit.
 */
export function readUpload(req: Request, limits: UploadLimits = DEFAULT_LIMITS): Promise<Upload> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > limits.maxFileBytes + limits.multipartOverheadBytes) {
    return Promise.reject(tooLarge(req, limits));
  }
  return new Promise<Upload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: { files: 1, fileSize: limits.maxFileBytes, fields: 4, fieldSize: limits.maxFieldBytes, parts: 8 },
        // RFC 7578: browsers send file names as raw UTF-8 bytes; busboy's default reads them as latin1.
        defParamCharset: 'utf8',
      });
    } catch (error) {
      reject(new AppError('BAD_REQUEST', 'The multipart body has no valid boundary.', { cause: error }));
      return;
    }
    let settled = false;
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      reject(error);
    };
    // Each piece is copied as it arrives, into memory sized from the declared length: no copy of the
    // whole file at the end, on the event loop, in one go.
    const content = new GrowingBuffer(Number.isFinite(declared) ? declared : 64 * 1024);
    let file: Omit<Upload, 'content' | 'title'> | null = null;
    let fileDone = false;
    let title: string | null = null;

    parser.on('file', (name, stream, info) => {
      if (name !== 'file') {
        stream.resume();
        fail(AppError.validation({ [name]: [{ code: 'unrecognized_keys', message: 'The document goes in the form field `file`.' }] }));
        return;
      }
      file = { fileName: info.filename ?? null, mediaType: info.mimeType ?? null };
      stream.on('data', (chunk: Buffer) => content.append(chunk));
      stream.on('limit', () => fail(tooLarge(req, limits)));
      stream.on('end', () => (fileDone = true));
      // A body cut off inside the file part errors the file stream too; unhandled, it would kill the process.
      stream.on('error', (error) => fail(malformed(error)));
    });
    parser.on('field', (name, value, info) => {
      if (name === 'title' && !info.valueTruncated) title = value.trim() || null;
      else if (name === 'title') fail(AppError.validation({ title: [{ code: 'too_big', message: `At most ${limits.maxFieldBytes} bytes.` }] }));
    });
    parser.on('filesLimit', () => fail(AppError.validation({ file: [{ code: 'too_many_files', message: 'Upload one file per request.' }] })));
    parser.on('partsLimit', () => fail(AppError.validation({ body: [{ code: 'too_many_parts', message: 'Too many form fields.' }] })));
    parser.on('error', (error) => fail(malformed(error)));
    parser.on('close', () => {
      if (settled) return;
      if (!file || !fileDone) {
        fail(AppError.validation({ file: [{ code: 'invalid_type', message: 'Attach the document as the form field `file`.' }] }));
        return;
      }
      settled = true;
      resolve({ ...file, content: content.bytes(), title });
    });
    req.on('aborted', () => fail(new AppError('BAD_REQUEST', 'The upload was cut off.')));
    req.pipe(parser);
  });
}

function malformed(cause: unknown): AppError {
  return new AppError('BAD_REQUEST', 'The multipart body is malformed or was cut off (no closing boundary); nothing was stored.', { cause });
}

/**
 * The 413 for an oversized upload. The rest of the body is read and dropped (up to maxDrainBytes)
 * so the client, still sending, receives the answer rather than a reset connection; the connection
 * then closes.
 */
function tooLarge(req: Request, limits: UploadLimits): AppError {
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limits.maxDrainBytes) req.destroy();
  });
  req.resume();
  return new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${limits.maxFileBytes} bytes.`, {
    details: { limit_bytes: limits.maxFileBytes },
    headers: { Connection: 'close' },
  });
}

/** Bytes appended piece by piece into one allocation of its own, doubled when full. */
class GrowingBuffer {
  private buffer: Buffer;
  private length = 0;

  constructor(expectedBytes: number) {
    this.buffer = Buffer.allocUnsafeSlow(Math.max(1, expectedBytes));
  }

  append(piece: Buffer): void {
    if (this.length + piece.length > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.length + piece.length));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    piece.copy(this.buffer, this.length);
    this.length += piece.length;
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
