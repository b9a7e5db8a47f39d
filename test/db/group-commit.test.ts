import path from 'node:path';
import { SqliteConnection } from '../../src/db/sqlite/connection';
import { GroupCommitWriter } from '../../src/db/sqlite/group-commit';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/** SQLite group commit: concurrent writes share a transaction; a half-written job never commits. */
let connection: SqliteConnection;
const counters = { writes: 0, commits: 0 };
let writer: GroupCommitWriter;

beforeAll(async () => {
  connection = await SqliteConnection.open(path.join(makeTempDir(), 'group.sqlite'), { readOnly: false, busyTimeoutMs: 1000 });
  await connection.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE NOT NULL)');
  writer = new GroupCommitWriter(connection, counters);
});

afterAll(async () => {
  await connection.close();
  removeTempDirs();
});

const values = async () => (await connection.all<{ v: string }>('SELECT v FROM t ORDER BY id', [])).map((row) => row.v);

it('writes that arrive together are committed together, each answered with its own result', async () => {
  const before = counters.commits;
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, index) => writer.write((execute) => execute('INSERT INTO t (v) VALUES (?)', [`row-${index}`]))),
  );
  expect(results.every((result) => result.changes === 1)).toBe(true);
  expect(new Set(results.map((result) => result.lastID)).size).toBe(20);
  // The first write starts a transaction alone; the 19 that queued meanwhile share the next one.
  expect(counters.commits - before).toBeLessThanOrEqual(2);
  expect(await values()).toHaveLength(20);
});

it('a job whose first statement fails is refused alone; the others of its batch commit', async () => {
  const outcomes = await Promise.allSettled([
    writer.write((execute) => execute('INSERT INTO t (v) VALUES (?)', ['a1'])),
    writer.write((execute) => execute('INSERT INTO t (v) VALUES (?)', ['row-0'])), // duplicate
    writer.write((execute) => execute('INSERT INTO t (v) VALUES (?)', ['a2'])),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(await values()).toEqual(expect.arrayContaining(['a1', 'a2']));
});

it('a job that fails halfway rolls its batch back; the other jobs are written again, it is not', async () => {
  const outcomes = await Promise.allSettled([
    writer.write((execute) => execute('INSERT INTO t (v) VALUES (?)', ['b1'])),
    writer.write(async (execute) => {
      await execute('INSERT INTO t (v) VALUES (?)', ['half']);
      await execute('INSERT INTO t (v) VALUES (?)', ['row-1']); // duplicate: the job fails after writing
    }),
    writer.write((execute) => execute('INSERT INTO t (v) VALUES (?)', ['b2'])),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  const stored = await values();
  expect(stored).toEqual(expect.arrayContaining(['b1', 'b2']));
  expect(stored).not.toContain('half');
  expect(stored.filter((value) => value === 'b1')).toHaveLength(1);
});

it('a statement written alone is its own transaction (no BEGIN/COMMIT); statements that queue together share one', async () => {
  // The real connection, with the calls into it recorded.
  const calls: string[] = [];
  const recorded = new Proxy(connection, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'exec') calls.push(String(args[0]));
        if (key === 'run') calls.push(`run ${String((args[1] as unknown[])[0])}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const lone = new GroupCommitWriter(recorded, { writes: 0, commits: 0 });
  expect(await lone.writeStatement('INSERT INTO t (v) VALUES (?)', ['alone'])).toMatchObject({ changes: 1 });
  expect(calls).toEqual(['run alone']);
  // A statement that fails alone changes nothing and leaves the writer usable.
  await expect(lone.writeStatement('INSERT INTO t (v) VALUES (?)', ['alone'])).rejects.toThrow(/UNIQUE/);
  await lone.idle();
  calls.length = 0;
  const results = await Promise.all(['c1', 'c2', 'c3'].map((v) => lone.writeStatement('INSERT INTO t (v) VALUES (?)', [v])));
  expect(results.every((result) => result.changes === 1)).toBe(true);
  // The first goes at once, alone; the two that queued meanwhile share a transaction.
  expect(calls).toEqual(['run c1', 'BEGIN IMMEDIATE', 'run c2', 'run c3', 'COMMIT']);
  expect(await values()).toEqual(expect.arrayContaining(['alone', 'c1', 'c2', 'c3']));
});
