import type { OffThreadTaskIo } from '../../src/offload/off-thread';

/** Tasks for the off-thread runner's tests (test/offload/off-thread.test.ts); loaded in worker threads. */

/** Emits `count` parts `{index}` one after another; returns how many it emitted. */
export async function emitParts(input: { count: number }, io: OffThreadTaskIo): Promise<number> {
  for (let index = 0; index < input.count; index += 1) await io.emit({ index });
  return input.count;
}

/** Sums the numbers it is sent until the input ends; also reports the bytes it was handed in `bytes`. */
export async function sumReceived(input: { bytes: Uint8Array }, io: OffThreadTaskIo): Promise<{ sum: number; received: number; bytes: number }> {
  let sum = 0;
  let received = 0;
  for await (const value of io.received()) {
    sum += value as number;
    received += 1;
  }
  return { sum, received, bytes: input.bytes.byteLength };
}

/** Waits for input that never ends. */
export async function waitForever(_input: unknown, io: OffThreadTaskIo): Promise<never> {
  for await (const value of io.received()) void value;
  throw new Error('the input ended');
}

/** Never answers, input or not. */
export function hang(): Promise<never> {
  return new Promise<never>(() => undefined);
}
