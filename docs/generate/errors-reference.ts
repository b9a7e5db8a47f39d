import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '../../src/protocol/error-codes';
import { generatedBanner, table } from './markdown';
import { repoRoot } from './repo';

/**
 * The error-code reference: the closed set and HTTP statuses from src/protocol/error-codes.ts, the meaning
 * of each code from the table in docs/errors.md (the hand-written source, which also explains the
 * envelope). A code without a row, a row without a code, or a status that disagrees is an error.
 */
export function errorMeanings(root = repoRoot()): Map<ErrorCode, string> {
  const text = readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  const rows = new Map<string, { status: number; meaning: string }>();
  for (const row of text.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|\s*$/gm)) {
    rows.set(row[1]!, { status: Number(row[2]), meaning: row[3]! });
  }
  const problems: string[] = [];
  const meanings = new Map<ErrorCode, string>();
  for (const code of ERROR_CODES) {
    const row = rows.get(code);
    if (!row) problems.push(`${code} has no row in docs/errors.md`);
    else if (row.status !== ERROR_STATUS[code]) problems.push(`${code}: docs/errors.md says ${row.status}, src/protocol/error-codes.ts ${ERROR_STATUS[code]}`);
    else meanings.set(code, row.meaning);
  }
  for (const code of rows.keys())
    if (!(code in ERROR_STATUS)) problems.push(`docs/errors.md documents ${code}, which src/protocol/error-codes.ts does not have`);
  if (problems.length > 0) throw new Error(`docs generator: error codes out of step:\n  ${problems.join('\n  ')}`);
  return meanings;
}

/** The prose of docs/errors.md before its code table (the envelope and how to read it). */
function envelopeProse(root: string): string {
  const text = readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  // Without the title and the note to editors (a blockquote) that opens the source file.
  const body = text.replace(/^# .*\n/, '').split(/^## Codes\s*$/m)[0]!;
  return body.replace(/^\s*(>.*\n)+/, '').trim();
}

export function errorsReferencePage(root = repoRoot()): string {
  const meanings = errorMeanings(root);
  const byStatus = [...new Set(ERROR_CODES.map((code) => ERROR_STATUS[code]))].sort((a, b) => a - b);
  return [
    generatedBanner('src/protocol/error-codes.ts (the codes and their HTTP status) and docs/errors.md (their meaning)'),
    '# Error codes',
    '',
    envelopeProse(root),
    '',
    '## Codes',
    '',
    `The closed set: ${ERROR_CODES.length} codes. Clients switch on \`code\`, never on \`message\`.`,
    '',
    table(
      ['Code', 'HTTP', 'When'],
      ERROR_CODES.map((code) => [`\`${code}\``, String(ERROR_STATUS[code]), meanings.get(code)!]),
    ),
    '',
    '## By HTTP status',
    '',
    table(
      ['HTTP', 'Codes'],
      byStatus.map((status) => [
        String(status),
        ERROR_CODES.filter((code) => ERROR_STATUS[code] === status)
          .map((code) => `\`${code}\``)
          .join(', '),
      ]),
    ),
    '',
    'WebSocket `error` frames carry the same codes; the [WebSocket protocol](./websocket.md#error-codes-in-error-frames)',
    'lists the ones a session socket sends and its close codes.',
    '',
  ].join('\n');
}
