import { KNOWLEDGE_DEFAULTS } from './limits';

/**
 * Items in batches of at most insertBatchRows items and (past the first item) insertBatchChars of
 * text each, in order: one INSERT's rows, or one message's worth of chunks between threads. Each
 * batch is handled in one go on the event loop, so its size bounds how long that holds the loop.
 */
export function textBatches<T>(items: readonly T[], textOf: (item: T) => string): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let chars = 0;
  for (const item of items) {
    const length = textOf(item).length;
    if (batch.length > 0 && (batch.length >= KNOWLEDGE_DEFAULTS.insertBatchRows || chars + length > KNOWLEDGE_DEFAULTS.insertBatchChars)) {
      batches.push(batch);
      batch = [];
      chars = 0;
    }
    batch.push(item);
    chars += length;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
