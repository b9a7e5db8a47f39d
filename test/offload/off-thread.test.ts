import { OFF_THREAD_MAX_WORKERS, OffThreadFailure, OffThreadTimeout, runOffThread, startOffThread } from '../../src/offload/off-thread';

/**
 * The off-thread runner beyond one input and one result: a large result handed back in parts, one
 * per turn of the hub's event loop; input sent while the task runs; buffers moved, not copied; and a
 * task given up or left unfinished ends its worker and frees its place.
 */
const TASKS = require.resolve('../fakes/off-thread-tasks');
const LIMITS = { timeoutMs: 20_000, maxHeapMb: 64 };

describe('off-thread tasks', () => {
  it('parts arrive in order, each in a turn of the event loop of its own, before the result', async () => {
    // Counts turns of the event loop: an immediate runs once per turn, after its I/O callbacks.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const seen: { index: number; turn: number }[] = [];
    try {
      const result = await runOffThread<number>(TASKS, 'emitParts', { count: 20 }, LIMITS, {
        onPart: (part) => seen.push({ index: (part as { index: number }).index, turn: turns }),
      });
      expect(result).toBe(20);
    } finally {
      ticking = false;
    }
    expect(seen.map((part) => part.index)).toEqual([...Array(20).keys()]);
    // The worker sends a part only once the last one was taken, so no two are handled in one go.
    for (let index = 1; index < seen.length; index += 1) expect(seen[index].turn).toBeGreaterThan(seen[index - 1].turn);
  });

  it('input sent while the task runs is received in order; a transferred buffer is moved, not copied', async () => {
    const bytes = new Uint8Array(1024 * 1024);
    const task = await startOffThread<{ sum: number; received: number; bytes: number }>(TASKS, 'sumReceived', { bytes }, LIMITS, { transfer: [bytes.buffer] });
    expect(bytes.byteLength).toBe(0);
    for (let value = 1; value <= 100; value += 1) task.send(value);
    expect(await task.finish()).toEqual({ sum: 5050, received: 100, bytes: 1024 * 1024 });
  });

  it('a part the caller fails to take fails the task, not the process', async () => {
    const taking = runOffThread(TASKS, 'emitParts', { count: 3 }, LIMITS, {
      onPart: () => {
        throw new Error('no room');
      },
    });
    await expect(taking).rejects.toThrow('taking a part failed: no room');
  });

  it('a part nobody takes fails the task', async () => {
    await expect(runOffThread(TASKS, 'emitParts', { count: 1 }, LIMITS)).rejects.toThrow(OffThreadFailure);
  });

  it('a task left unfinished is ended by its time limit; a cancelled one at once; both free their worker', async () => {
    const unfinished = await startOffThread(TASKS, 'hang', {}, { timeoutMs: 300, maxHeapMb: 64 });
    // The limit counts from the call: what is left of it once a worker place was taken (299 ms under CI run 3's load).
    await expect(unfinished.finish()).rejects.toThrow(/took longer than \d+ ms/);
    const tasks = await Promise.all(Array.from({ length: OFF_THREAD_MAX_WORKERS }, () => startOffThread(TASKS, 'waitForever', {}, LIMITS)));
    for (const task of tasks) task.cancel();
    for (const task of tasks) await expect(task.finish()).rejects.toThrow(OffThreadTimeout);
    // Every place is free again: as many tasks as there are workers start and finish. A place still
    // held would keep one of them waiting until its limit; the limit is the file's own, not a second,
    // which four workers starting at once missed under CI's load (991 ms, a 2-core guest, 2026-11-29).
    const again = await Promise.all(Array.from({ length: OFF_THREAD_MAX_WORKERS }, () => startOffThread(TASKS, 'emitParts', { count: 0 }, LIMITS)));
    expect(await Promise.all(again.map((task) => task.finish()))).toEqual(Array(OFF_THREAD_MAX_WORKERS).fill(0));
  });
});
