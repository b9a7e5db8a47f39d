import sqlite3 from 'sqlite3';

export interface RunResult {
  lastID: number;
  changes: number;
}

/** Slots of a connection's shared statement counter (see `track`). */
export const IN_FLIGHT = 0;
export const STOPPING = 1;

/** A promise-shaped sqlite3 connection with its prepared statements cached by SQL text. */
export class SqliteConnection {
  private readonly statements = new Map<string, sqlite3.Statement>();
  private shared: Int32Array | null = null;

  private constructor(private readonly database: sqlite3.Database) {}

  /**
   * Counts this connection's statements in flight in `shared[IN_FLIGHT]` and refuses new ones once
   * `shared[STOPPING]` is set: the writer thread's, which must not be torn down while sqlite3 still
   * owes it a callback (sqlite3 then aborts the whole process; see write-thread.ts).
   */
  track(shared: Int32Array): void {
    this.shared = shared;
  }

  static open(file: string, options: { readOnly: boolean; busyTimeoutMs: number }): Promise<SqliteConnection> {
    const mode = options.readOnly ? sqlite3.OPEN_READONLY : sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE;
    return new Promise((resolve, reject) => {
      const database = new sqlite3.Database(file, mode, (error) => {
        if (error) return reject(error);
        database.configure('busyTimeout', options.busyTimeoutMs);
        resolve(new SqliteConnection(database));
      });
    });
  }

  exec(sql: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.begin(reject)) return;
      this.database.exec(sql, (error) => {
        this.end();
        if (error) reject(error);
        else resolve();
      });
    });
  }

  run(sql: string, parameters: readonly unknown[]): Promise<RunResult> {
    const statement = this.prepared(sql);
    const end = () => this.end();
    return new Promise((resolve, reject) => {
      if (!this.begin(reject)) return;
      statement.run(parameters, function (this: sqlite3.RunResult, error: Error | null) {
        end();
        if (error) reject(error);
        else resolve({ lastID: this.lastID, changes: this.changes });
      });
    });
  }

  all<T>(sql: string, parameters: readonly unknown[]): Promise<T[]> {
    const statement = this.prepared(sql);
    return new Promise((resolve, reject) => {
      if (!this.begin(reject)) return;
      statement.all(parameters, (error: Error | null, rows: T[]) => {
        this.end();
        if (error) reject(error);
        else resolve(rows);
      });
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.statements.values()].map((statement) => new Promise<void>((resolve) => statement.finalize(() => resolve()))));
    this.statements.clear();
    await new Promise<void>((resolve, reject) => this.database.close((error) => (error ? reject(error) : resolve())));
  }

  private begin(reject: (error: Error) => void): boolean {
    if (!this.shared) return true;
    if (Atomics.load(this.shared, STOPPING) === 1) {
      reject(new Error('the SQLite writer is stopping: the process exits'));
      return false;
    }
    Atomics.add(this.shared, IN_FLIGHT, 1);
    return true;
  }

  private end(): void {
    const shared = this.shared;
    if (!shared) return;
    // Counted out only once sqlite3's native callback has returned: ending the thread inside it aborts too.
    setImmediate(() => {
      Atomics.sub(shared, IN_FLIGHT, 1);
      Atomics.notify(shared, IN_FLIGHT);
    });
  }

  private prepared(sql: string): sqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.database.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** How sequelize stores a DATE in SQLite (`2026-11-25 04:51:26.685 +00:00`): written the same way, so both read it. */
export function toSqliteDate(date: Date): string {
  return date.toISOString().replace('T', ' ').replace('Z', ' +00:00');
}

export function fromSqliteDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(value as string);
}
