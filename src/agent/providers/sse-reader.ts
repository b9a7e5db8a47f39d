import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * The server-sent events of a streamed model response, a read at a time: each batch holds every
 * event one read of the body completed (a fast server packs many tokens into one read; a slow one
 * sends one). Parsed by `eventsource-parser` instead of the SDKs' stream classes, whose line decoder,
 * byte concatenation and async generator per event were the largest part of a streamed answer's
 * per-chunk cost in the hub's profile. An abort of `signal` ends the batches quietly (the caller
 * tells a cancel or an idle timeout by the signal), as the SDKs' streams do.
 */
export async function* sseBatches(response: Response, signal: AbortSignal): AsyncGenerator<EventSourceMessage[]> {
  if (!response.body) return;
  let batch: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => batch.push(event) });
  const decoder = new TextDecoder();
  // The lean fetch's IncomingMessage and a web ReadableStream are both async-iterable byte chunks.
  const body = response.body as unknown as AsyncIterable<Uint8Array>;
  try {
    for await (const chunk of body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (batch.length === 0) continue;
      const completed = batch;
      batch = [];
      yield completed;
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  }
}
