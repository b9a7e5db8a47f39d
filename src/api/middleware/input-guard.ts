import type { RequestHandler } from 'express';
import { AppError, type FieldIssues } from '../../core/errors';

/**
 * Deepest nesting of objects and arrays accepted in a request body; the body itself is level 1.
 * Real bodies use a handful of levels (a workflow sync: 5); `config` and `metadata` are free-form but
 * are stored as JSON, and a value nested thousands of levels deep overflows the stack of whatever
 * serialises it next (JSON.stringify in the database layer). 32 leaves room for any honest use.
 */
export const MAX_JSON_DEPTH = 32;

const NUL = '\u0000';

/** The 422 issue for a string holding U+0000 (PostgreSQL cannot store it; SQLite truncates the SQL at it). */
export const NUL_ISSUE = { code: 'invalid_characters', message: 'Must not contain NUL (U+0000) characters.' } as const;

/**
 * A UTF-16 surrogate without its other half (`"\ud800"` in JSON). It has no UTF-8 form: the database
 * would store U+FFFD instead, so what was accepted would not be what is read back. Refused like NUL.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const LONE_SURROGATE_ISSUE = {
  code: 'invalid_characters',
  message: 'Must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair).',
} as const;

/** The 422 issue for `text`, or null: NUL first (the documented one), then lone surrogates. */
function characterIssue(text: string): { code: string; message: string } | null {
  if (text.includes(NUL)) return NUL_ISSUE;
  if (LONE_SURROGATE.test(text)) return LONE_SURROGATE_ISSUE;
  return null;
}

/** True when `text` holds a lone surrogate (for schemas outside REST bodies: WebSocket frames). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** Shown in a field name instead of the raw character (NUL, a lone surrogate), so a client can print and parse it. */
function printable(name: string): string {
  return name.replaceAll(NUL, '\\u0000').replace(new RegExp(LONE_SURROGATE.source, 'g'), (half) => `\\u${half.charCodeAt(0).toString(16)}`);
}

/**
 * Checks a parsed body before any schema sees it: nesting at most MAX_JSON_DEPTH, no NUL and no lone
 * surrogate in any string or key. Returns the 422 field issues, or null when the body is fine. Field names follow the
 * validator's convention (`metadata.note`, `tags.0`; the body itself is `body`).
 */
export function bodyIssues(body: unknown): FieldIssues | null {
  const fields: FieldIssues = {};
  const visit = (value: unknown, path: string[], depth: number): void => {
    if (typeof value === 'string') {
      const issue = characterIssue(value);
      if (issue) (fields[fieldName(path)] ??= []).push({ ...issue });
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (depth > MAX_JSON_DEPTH) {
      // Named by its top-level field: the full path of a 5,000-level value is no use to anyone.
      const name = fieldName(path.slice(0, 1));
      fields[name] ??= [{ code: 'too_deep', message: `Nested more than ${MAX_JSON_DEPTH} levels deep (objects and arrays, counting the body).` }];
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      const issue = characterIssue(key);
      if (issue) (fields[fieldName([...path, key])] ??= []).push({ ...issue });
      visit(child, [...path, key], depth + 1);
    }
  };
  visit(body, [], 1);
  return Object.keys(fields).length > 0 ? fields : null;
}

function fieldName(path: string[]): string {
  return path.length === 0 ? 'body' : printable(path.join('.'));
}

/** Runs after the body parsers: refuses a too-deep body or NUL characters with 422 before routing. */
export function bodyGuard(): RequestHandler {
  return (req, _res, next) => {
    const fields = bodyIssues(req.body);
    if (fields) throw AppError.validation(fields);
    next();
  };
}

/**
 * NUL characters in path or query parameters (`%00`): named `path.<name>` / `query.<name>` like
 * the validator's own issues. Returns null when there are none.
 */
export function parameterIssues(params: Record<string, unknown>, query: Record<string, unknown>): FieldIssues | null {
  const fields: FieldIssues = {};
  const check = (prefix: string, source: Record<string, unknown>) => {
    for (const [name, value] of Object.entries(source)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.some((item) => typeof item === 'string' && item.includes(NUL)) || name.includes(NUL)) {
        fields[`${prefix}${printable(name)}`] = [{ ...NUL_ISSUE }];
      }
    }
  };
  check('path.', params);
  check('query.', query);
  return Object.keys(fields).length > 0 ? fields : null;
}
