import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AppError, ERROR_CODES, ERROR_STATUS } from '../../src/core/errors';
import { Client } from 'pg';
import { Sequelize } from 'sequelize';

/** Rows of the code table in docs/errors.md: | `CODE` | status | when |. */
function documentedCodes(): Map<string, number> {
  const text = readFileSync(path.resolve(__dirname, '../../docs/errors.md'), 'utf8');
  const rows = [...text.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|/gm)];
  return new Map(rows.map((row) => [row[1]!, Number(row[2])]));
}

describe('the closed set of error codes', () => {
  it('documents every code in docs/errors.md with its HTTP status', () => {
    const documented = documentedCodes();
    const undocumented = ERROR_CODES.filter((code) => documented.get(code) !== ERROR_STATUS[code]);
    expect(undocumented).toEqual([]);
  });

  it('documents no code that does not exist', () => {
    const stale = [...documentedCodes().keys()].filter((code) => !(code in ERROR_STATUS));
    expect(stale).toEqual([]);
  });

  it("wraps a database that cannot be reached as SERVICE_UNAVAILABLE (the libraries' own errors)", async () => {
    const sequelize = new Sequelize('postgres://nobody@127.0.0.1:1/none', { logging: false, pool: { max: 1, acquire: 5_000 } });
    const refused = await sequelize.authenticate().catch((error: unknown) => error);
    await sequelize.close();
    expect(AppError.from(refused)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, headers: { 'Retry-After': '2' } });
    const pgRefused = await new Client({ host: '127.0.0.1', port: 1 }).connect().catch((error: unknown) => error);
    expect(AppError.from(pgRefused).code).toBe('SERVICE_UNAVAILABLE');
    const dropped = new Error('Connection terminated unexpectedly');
    expect(AppError.from(dropped).code).toBe('SERVICE_UNAVAILABLE');
    // A fault of ours is not mistaken for one.
    expect(AppError.from(new TypeError("Cannot read properties of undefined (reading 'id')")).code).toBe('INTERNAL_ERROR');
    expect(AppError.from(Object.assign(new Error('duplicate key'), { code: '23505' })).code).toBe('INTERNAL_ERROR');
  });

  it('wraps unknown errors as INTERNAL_ERROR without their message', () => {
    const wrapped = AppError.from(new Error('secret detail'));
    expect(wrapped.code).toBe('INTERNAL_ERROR');
    expect(wrapped.status).toBe(500);
    expect(wrapped.message).not.toContain('secret detail');
    const known = new AppError('CONFLICT', 'exists');
    expect(AppError.from(known)).toBe(known);
  });
});
