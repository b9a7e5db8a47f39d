import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { SqliteConnection } from '../../src/db/sqlite/connection';
import { SqliteWriteThread } from '../../src/db/sqlite/write-thread';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/** The embedded database's writer in a thread of its own: ordered, group-committed, answered with results. */
let file: string;
let reader: SqliteConnection;
let writer: SqliteWriteThread;
const counters = { writes: 0, commits: 0 };

beforeAll(async () => {
  file = path.join(makeTempDir(), 'thread.sqlite');
  const setup = await SqliteConnection.open(file, { readOnly: false, busyTimeoutMs: 1000 });
  await setup.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE NOT NULL)');
  await setup.close();
  writer = await SqliteWriteThread.open(file, 1000, counters);
  reader = await SqliteConnection.open(file, { readOnly: true, busyTimeoutMs: 1000 });
});

afterAll(async () => {
  await writer.close();
  await reader.close();
  removeTempDirs();
});

const insert = (value: string) => ({ sql: 'INSERT INTO t (v) VALUES (?)', parameters: [value] });
const values = async () => (await reader.all<{ v: string }>('SELECT v FROM t ORDER BY id', [])).map((row) => row.v);

it('writes sent together commit together; each is answered with its statements’ results, and the counters follow', async () => {
  const before = { ...counters };
  const results = await Promise.all(Array.from({ length: 20 }, (_, index) => writer.write([insert(`row-${index}`)])));
  expect(results.map((result) => result.map((run) => run.changes))).toEqual(Array.from({ length: 20 }, () => [1]));
  expect(new Set(results.map((result) => result[0]!.lastID)).size).toBe(20);
  expect(counters.writes - before.writes).toBe(20);
  expect(counters.commits - before.commits).toBeGreaterThanOrEqual(1);
  // Writes arriving while the thread is busy join its next transaction. How many transactions 20
  // writes take depends on when the thread wakes while they are posted (1–2 on an idle machine, 3 in
  // a loaded CI run); without grouping it would be 20.
  expect(counters.commits - before.commits).toBeLessThanOrEqual(10);
  expect(await values()).toHaveLength(20);
});

it('a statement marked stopUnlessChanged that changes nothing ends its write there', async () => {
  const results = await writer.write([
    { sql: 'INSERT INTO t (v) VALUES (?) ON CONFLICT (v) DO NOTHING', parameters: ['row-0'], stopUnlessChanged: true },
    insert('never'),
  ]);
  expect(results.map((result) => result.changes)).toEqual([0]);
  expect(await values()).not.toContain('never');
});

it("a failed write is refused with SQLite's code and message; the writes beside it commit, and a half-written one leaves nothing", async () => {
  const outcomes = await Promise.allSettled([
    writer.write([insert('a1')]),
    writer.write([insert('half'), insert('row-1')]), // the second statement is a duplicate
    writer.write([insert('a2')]),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  const error = (outcomes[1] as PromiseRejectedResult).reason as Error & { code?: string };
  expect(error).toBeInstanceOf(Error);
  expect(error.code).toBe('SQLITE_CONSTRAINT');
  expect(error.message).toMatch(/UNIQUE constraint failed: t\.v/);
  const stored = await values();
  expect(stored).toEqual(expect.arrayContaining(['a1', 'a2']));
  expect(stored).not.toContain('half');
});

it("commits while this thread's event loop never turns (the point of the thread)", () => {
  const wal = `${file}-wal`;
  const before = statSync(wal).size;
  const written = writer.write(Array.from({ length: 50 }, (_, index) => insert(`busy-${index}`)));
  // The request goes out at the end of this turn of the loop; hand it over, then hold the loop.
  return new Promise<void>((resolve, reject) => {
    setImmediate(() => {
      const deadline = Date.now() + 10_000;
      // Synchronous: no callback of this thread runs until the loop ends. The WAL grows at the commit.
      while (statSync(wal).size <= before && Date.now() < deadline);
      const grew = statSync(wal).size > before;
      written.then(() => (grew ? resolve() : reject(new Error('the write did not commit while the event loop was held'))), reject);
    });
  });
});

it('a write made in a busy turn of the event loop is answered at the end of that turn, not in the next', async () => {
  const order: string[] = [];
  const server = net.createServer();
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  try {
    await new Promise<void>((resolve) => {
      // A socket's data callback, as a request's is: the turn's I/O phase, then its setImmediate phase.
      server.once('connection', (socket) =>
        socket.once('data', () => {
          const written = writer.write([insert('in-a-busy-turn')]).then(() => order.push('write answered'));
          const until = Date.now() + 50;
          while (Date.now() < until); // the rest of a busy turn: the thread answers meanwhile
          const ended = new Promise((turnEnded) => setImmediate(() => turnEnded(order.push('end of the turn'))));
          void Promise.all([written, ended]).then(() => resolve());
        }),
      );
      client.write('go');
    });
  } finally {
    client.destroy();
    server.close();
  }
  expect(order).toEqual(['write answered', 'end of the turn']);
});

it('a thread that dies fails the writes it held, saying so; the next write starts another thread', async () => {
  // A message the thread cannot read throws in it: the thread ends (as it would on a fault of its own)
  // before it reads the write sent next.
  (writer as unknown as { worker: Worker }).worker.postMessage(null);
  const held = writer.write([insert('lost-with-the-thread')]);
  await expect(held).rejects.toThrow(/the SQLite writer thread (failed|stopped)/);
  const before = counters.writes;
  const [result] = await writer.write([insert('after-the-restart')]);
  expect(result!.changes).toBe(1);
  expect(counters.writes).toBe(before + 1);
  expect(await values()).toContain('after-the-restart');
  expect(await values()).not.toContain('lost-with-the-thread');
});

/**
 * A process that exits mid-write ends the thread while sqlite3 owes it callbacks, which aborts the
 * process ("FATAL ERROR … napi_throw", status 134) unless the exit waits for them: it keeps its status.
 */
it.each([
  ['process.exit(3)', 'process.exit(3)', 3],
  ['an uncaught error', 'throw new Error("boom")', 1],
])('a process that ends by %s in the middle of a write ends with its own status, not an abort', (_label, ending, status) => {
  const script = `
    const { SqliteWriteThread } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist/src/db/sqlite/write-thread.js'))});
    (async () => {
      const writer = await SqliteWriteThread.open(${JSON.stringify(file)}, 2000, { writes: 0, commits: 0 });
      const insert = () => ({ sql: 'INSERT INTO t (v) VALUES (?)', parameters: ['exit-' + Math.random()] });
      await writer.write([insert()]);
      // Ten thousand statements: the thread is still writing them when the process ends, 30 ms on.
      writer.write(Array.from({ length: 10000 }, insert)).catch(() => {});
      setTimeout(() => { ${ending}; }, 30);
    })();`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
  expect(child.stderr).not.toMatch(/FATAL ERROR/);
  expect(child.status).toBe(status);
});

it('after close, a write is refused with a clear error', async () => {
  const other = await SqliteWriteThread.open(file, 1000, { writes: 0, commits: 0 });
  await other.close();
  await expect(other.write([insert('late')])).rejects.toThrow('the SQLite writer is closed');
});

it('a file it cannot open is refused at open, with the reason', async () => {
  await expect(SqliteWriteThread.open(path.join(makeTempDir(), 'missing', 'x.sqlite'), 1000, { writes: 0, commits: 0 })).rejects.toThrow(/SQLITE_CANTOPEN/);
});
