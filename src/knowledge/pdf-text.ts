import { Worker } from 'node:worker_threads';

export interface PdfLimits {
  /** A PDF still being read after this long is given up (a hostile file can loop pdf.js). */
  timeoutMs: number;
  /** Heap of the worker that reads it, so a hostile file cannot exhaust the hub's memory. */
  maxHeapMb: number;
}

/**
 * Runs in a worker thread: pdf.js (through unpdf) is CPU-heavy and loads its ESM bundle with a
 * dynamic import, so it runs off the event loop, in a plain Node context, one file per worker.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { extractText, getDocumentProxy } = require(workerData.unpdfPath);
  const pdf = await getDocumentProxy(workerData.content, { verbosity: 0 });
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    parentPort.postMessage({ ok: true, text: text.join('\\n\\n') });
  } finally {
    await pdf.destroy();
  }
})().catch((error) => parentPort.postMessage({ ok: false, message: String((error && error.message) || error) }));
`;

/** The text of a PDF's pages, blank line between pages. Rejects with the reason when it cannot be read. */
export function pdfText(content: Uint8Array, limits: PdfLimits): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { unpdfPath: require.resolve('unpdf'), content },
      resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
      stdout: true,
      stderr: true,
    });
    // pdf.js may print warnings about damaged files: dropped, never mixed into the hub's log.
    worker.stdout.resume();
    worker.stderr.resume();
    let done = false;
    const finish = (outcome: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      void worker.terminate();
      outcome();
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`reading the PDF took longer than ${limits.timeoutMs} ms`))), limits.timeoutMs);
    worker.on('message', (message: { ok: true; text: string } | { ok: false; message: string }) =>
      finish(() => (message.ok ? resolve(message.text) : reject(new Error(message.message)))),
    );
    worker.on('error', (error) => finish(() => reject(error)));
    worker.on('exit', (code) => finish(() => reject(new Error(`the PDF reader stopped (exit ${code})`))));
  });
}
