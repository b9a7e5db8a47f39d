import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/process';

// The docs site's port (issue 33): `--port` / `DOCS_PORT`, else the spec's 8001.

const { docsPort } = require('../../scripts/docs-serve.js') as { docsPort(argv: string[], env: Record<string, string | undefined>): number };

describe('the docs site port', () => {
  it('is 8001 unless --port or DOCS_PORT says otherwise; --port wins', () => {
    expect(docsPort([], {})).toBe(8001);
    expect(docsPort([], { DOCS_PORT: '9100' })).toBe(9100);
    expect(docsPort(['--port', '9200'], { DOCS_PORT: '9100' })).toBe(9200);
    expect(docsPort(['--port=9300'], {})).toBe(9300);
    expect(docsPort(['-p', '9400'], {})).toBe(9400);
  });

  it('refuses a value that is not a port, naming both ways to set it', () => {
    expect(() => docsPort(['--port', 'eighty'], {})).toThrow('Not a port: "eighty" (--port or DOCS_PORT: 1–65535).');
    expect(() => docsPort([], { DOCS_PORT: '70000' })).toThrow(/Not a port/);
    const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/docs-serve.js'), 'dev', '--port', 'nope'], { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr.trim() }).toEqual({ status: 2, stderr: 'Not a port: "nope" (--port or DOCS_PORT: 1–65535).' });
  });
});
