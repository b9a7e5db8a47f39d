#!/usr/bin/env node
// Compiles the hub (src/, adapters/, bench/, docs/generate/) into dist/ with tsc, unless no input
// changed since the last compile: `npm start` runs this every time, and even an incremental tsc
// spends ~2 s loading the program; comparing modification times takes ~20 ms.
// Inputs: every file under those folders, tsconfig*.json and package-lock.json. `--force` compiles anyway.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

const INPUT_DIRS = ['src', 'adapters', 'bench', path.join('docs', 'generate')];
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

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
  const buildInfo = path.join(root, 'dist', '.tsbuildinfo');
  return !existsSync(buildInfo) || statSync(buildInfo).mtimeMs < newestInput(root);
}

module.exports = { needsCompile };

if (require.main === module) {
  const root = path.resolve(__dirname, '..');
  if (!process.argv.includes('--force') && !needsCompile(root)) process.exit(0);
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
