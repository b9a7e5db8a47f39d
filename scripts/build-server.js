#!/usr/bin/env node
// Compiles the hub (src/, adapters/, bench/, docs/generate/) into dist/, unless no input changed
// since the last compile: `npm start` runs this every time, and comparing modification times takes
// ~20 ms. Inputs: every file under those folders, tsconfig*.json and package-lock.json.
//
// The compile is a transpile with SWC (@swc/core, the compiler the test suite already runs on):
// each file on its own (tsconfig's `isolatedModules` guarantees that is safe), ~2 s for the whole hub
// where tsc takes ~80 s on a first start. Types are checked by `npm run typecheck` (and `npm test`),
// not here. `--tsc` compiles with tsc instead (the same output, checked); without @swc/core it is
// used anyway. `--force` compiles even when nothing changed.
'use strict';
const { spawnSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const INPUT_DIRS = ['src', 'adapters', 'bench', path.join('test', 'fakes'), path.join('docs', 'generate')];
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** Written after an SWC build (tsc writes its own `.tsbuildinfo`); either marks dist/ as built. */
const STAMPS = [path.join('dist', '.tsbuildinfo'), path.join('dist', '.build-stamp')];

function newestIn(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(full) : statSync(full).mtimeMs);
  }
  // A deleted file changes its folder's time.
  return Math.max(newest, statSync(dir).mtimeMs);
}

function newestInput(root) {
  let newest = 0;
  for (const dir of INPUT_DIRS) if (existsSync(path.join(root, dir))) newest = Math.max(newest, newestIn(path.join(root, dir)));
  for (const file of INPUT_FILES) if (existsSync(path.join(root, file))) newest = Math.max(newest, statSync(path.join(root, file)).mtimeMs);
  return newest;
}

/** True when dist/ is missing or older than any input of the compile. */
function needsCompile(root) {
  const built = STAMPS.map((stamp) => path.join(root, stamp)).filter((file) => existsSync(file));
  if (built.length === 0) return true;
  return Math.max(...built.map((file) => statSync(file).mtimeMs)) < newestInput(root);
}

function* typeScriptFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(full);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield full;
  }
}

/**
 * SWC options equivalent to tsconfig.json's emit: ES2022, CommonJS with esModuleInterop, source maps.
 * As tsc does under `module: node16`, `import()` stays Node's own dynamic import (`ignoreDynamic`),
 * which finds a CommonJS module's named exports by reading its source: `exportInteropAnnotation`
 * writes them where Node looks. Either compiler's files then load each other lazily alike (the test
 * setup's incremental tsc may rewrite some files of an SWC-built dist/).
 */
const SWC_OPTIONS = {
  swcrc: false,
  sourceMaps: true,
  module: { type: 'commonjs', ignoreDynamic: true, exportInteropAnnotation: true },
  jsc: { target: 'es2022', parser: { syntax: 'typescript' }, keepClassNames: true },
};

async function compileWithSwc(root) {
  const swc = require('@swc/core');
  const outRoot = path.join(root, 'dist');
  const files = INPUT_DIRS.filter((dir) => existsSync(path.join(root, dir))).flatMap((dir) => [...typeScriptFiles(path.join(root, dir))]);
  await Promise.all(
    files.map(async (file) => {
      const relative = path.relative(root, file);
      const out = path.join(outRoot, relative.replace(/\.ts$/, '.js'));
      const { code, map } = await swc.transformFile(file, { ...SWC_OPTIONS, filename: file, sourceFileName: path.relative(path.dirname(out), file) });
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, `${code}\n//# sourceMappingURL=${path.basename(out)}.map\n`);
      if (map) writeFileSync(`${out}.map`, map);
    }),
  );
  // src/version.ts imports ../package.json; tsc copies it beside dist/src the same way.
  copyFileSync(path.join(root, 'package.json'), path.join(outRoot, 'package.json'));
  writeFileSync(path.join(outRoot, '.build-stamp'), `${new Date().toISOString()} swc ${files.length} files\n`);
  return files.length;
}

function compileWithTsc(root) {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function hasSwc(root) {
  try {
    require.resolve('@swc/core', { paths: [root] });
    return true;
  } catch {
    return false;
  }
}

module.exports = { needsCompile, compileWithSwc };

if (require.main === module) {
  const root = path.resolve(__dirname, '..');
  if (!process.argv.includes('--force') && !needsCompile(root)) process.exit(0);
  const started = Date.now();
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (process.argv.includes('--tsc') || !hasSwc(root)) {
    process.stdout.write('Building the server (tsc: type-checks while it compiles, about a minute) …\n');
    compileWithTsc(root);
    process.stdout.write(`Built the server in ${seconds()}.\n`);
  } else {
    process.stdout.write('Building the server (swc) …\n');
    compileWithSwc(root).then(
      (count) => process.stdout.write(`Built the server (${count} files) in ${seconds()}.\n`),
      (error) => {
        process.stderr.write(`build-server: ${error instanceof Error ? error.message : String(error)}\n`);
        process.exit(1);
      },
    );
  }
}
