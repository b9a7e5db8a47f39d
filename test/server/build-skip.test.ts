import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

// The script `npm start` runs before it starts: it compiles only when an input changed.
const { needsCompile, compileWithSwc } = require('../../scripts/build-server.js') as {
  needsCompile(root: string): boolean;
  compileWithSwc(root: string): Promise<number>;
};

afterAll(() => removeTempDirs());

function project(): string {
  const root = makeTempDir();
  for (const dir of ['src/core', 'adapters/web', 'bench', 'docs/generate', 'dist']) mkdirSync(path.join(root, dir), { recursive: true });
  for (const file of ['src/core/a.ts', 'adapters/web/b.ts', 'tsconfig.json', 'package-lock.json']) writeFileSync(path.join(root, file), '');
  return root;
}

const at = (root: string, file: string, seconds: number) => utimesSync(path.join(root, file), seconds, seconds);

it('compiles when dist/ was never built, skips when nothing changed since, compiles again after a change', () => {
  const root = project();
  expect(needsCompile(root)).toBe(true);
  const built = Date.now() / 1000 + 60; // the build is newer than every input
  writeFileSync(path.join(root, 'dist/.tsbuildinfo'), '{}');
  at(root, 'dist/.tsbuildinfo', built);
  expect(needsCompile(root)).toBe(false);
  at(root, 'adapters/web/b.ts', built + 1);
  expect(needsCompile(root)).toBe(true);
});

it('a new lockfile (dependencies changed) or a deleted source file counts as a change', () => {
  const root = project();
  const base = Date.now() / 1000 - 100;
  for (const entry of [
    'src/core/a.ts',
    'adapters/web/b.ts',
    'tsconfig.json',
    'package-lock.json',
    'src/core',
    'src',
    'adapters/web',
    'adapters',
    'bench',
    'docs/generate',
  ])
    at(root, entry, base);
  writeFileSync(path.join(root, 'dist/.tsbuildinfo'), '{}');
  at(root, 'dist/.tsbuildinfo', base + 10);
  expect(needsCompile(root)).toBe(false);
  at(root, 'package-lock.json', base + 20);
  expect(needsCompile(root)).toBe(true);
  at(root, 'package-lock.json', base);
  expect(needsCompile(root)).toBe(false);
  rmSync(path.join(root, 'src/core/a.ts')); // its folder's time becomes now
  expect(needsCompile(root)).toBe(true);
});

it('compiles with SWC: CommonJS a plain `node` runs, package.json beside dist/src, and the stamp that marks dist/ as built', async () => {
  const root = project();
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ version: '9.8.7' }));
  // What the hub's code leans on: a default import of a CommonJS module and of package.json, `declare` fields, enums.
  writeFileSync(
    path.join(root, 'src/core/a.ts'),
    [
      "import path from 'node:path';",
      "import packageJson from '../../package.json';",
      'export enum Level { Low = 1 }',
      'export class Row { declare id: string; name = "row"; }',
      "export const facts = { version: packageJson.version, joined: path.join('a', 'b'), level: Level.Low, fields: Object.keys(new Row()) };",
    ].join('\n'),
  );
  expect(await compileWithSwc(root)).toBe(2);
  expect(needsCompile(root)).toBe(false);

  const { facts } = require(path.join(root, 'dist/src/core/a.js')) as { facts: unknown };
  expect(facts).toEqual({ version: '9.8.7', joined: path.join('a', 'b'), level: 1, fields: ['name'] });
});
