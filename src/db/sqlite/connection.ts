import sqlite3 from 'sqlite3';

export interface RunResult {
  lastID: number;
  changes: number;
}

/** A promise-shaped sqlite3 connection with its prepared statements cached by SQL text. */
export class SqliteConnection {
  private readonly statements = new Map<string, sqlite3.Statement>();

  private constructor(private readonly database: sqlite3.Database) {}

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
    return new Promise((resolve, reject) => this.database.exec(sql, (error) => (error ? reject(error) : resolve())));
  }

  run(sql: string, parameters: readonly unknown[]): Promise<RunResult> {
    const statement = this.prepared(sql);
    return new Promise((resolve, reject) => {
      statement.run(parameters, function (this: sqlite3.RunResult, error: Error | null) {
        if (error) reject(error);
        else resolve({ lastID: this.lastID, changes: this.changes });
      });
    });
  }

  all<T>(sql: string, parameters: readonly unknown[]): Promise<T[]> {
    const statement = this.prepared(sql);
    return new Promise((resolve, reject) => statement.all(parameters, (error: Error | null, rows: T[]) => (error ? reject(error) : resolve(rows))));
  }

  async close(): Promise<void> {
    await Promise.all([...this.statements.values()].map((statement) => new Promise<void>((resolve) => statement.finalize(() => resolve()))));
    this.statements.clear();
    await new Promise<void>((resolve, reject) => this.database.close((error) => (error ? reject(error) : resolve())));
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
