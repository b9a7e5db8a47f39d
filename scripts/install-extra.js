#!/usr/bin/env node
// Installs, on first use, a part of the project the default `npm install` leaves out because most
// people never need it: each has its own package.json and package-lock.json and is installed with
// `npm ci --prefix <dir>`. `npm run docs` / `docs:build` and the tests that use a part call this; a
// part already installed from its current lockfile costs a file read.
//   node scripts/install-extra.js docs webchat-widget      (npm run extras:install)
'use strict';
const { createHash } = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** The parts, by name: where each lives and what it is for (said while it installs). */
const EXTRAS = {
  docs: { dir: 'docs', what: 'the documentation site (VitePress, Mermaid)' },
  'webchat-widget': { dir: 'extras/webchat-widget', what: 'the Rasa Webchat widget of the /webchat/demo page' },
};

/** How long a second caller waits for a first one's install before giving up. */
const LOCK_WAIT_MS = 10 * 60_000;
const STAMP = '.switchboard-install-stamp';

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function partOf(name) {
  const extra = EXTRAS[name];
  if (!extra) throw new Error(`No such part: ${JSON.stringify(name)} (one of: ${Object.keys(EXTRAS).join(', ')})`);
  return { ...extra, full: path.join(root, extra.dir) };
}

/** The lockfile's hash: a part counts as installed when its node_modules was installed from exactly this. */
function lockHash(part) {
  return createHash('sha256')
    .update(readFileSync(path.join(part.full, 'package-lock.json')))
    .digest('hex');
}

function stampFile(part) {
  return path.join(part.full, 'node_modules', STAMP);
}

/** Whether the part is installed from its current lockfile. */
function isInstalled(name) {
  const part = partOf(name);
  const stamp = stampFile(part);
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === lockHash(part);
}

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the part's install lock (jest runs test files in parallel, two may ask at once); waits for another holder. */
function withLock(part, work) {
  const lock = path.join(part.full, '.install-lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(path.join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }));
      if (holder && !processAlive(holder)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} is held by process ${holder}: remove it if no install is running`);
      else sleep(500);
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Installs the part unless it already is; throws with npm's output when the install fails. */
function ensureExtra(name, { quiet = false } = {}) {
  const part = partOf(name);
  if (isInstalled(name)) return false;
  return withLock(part, () => {
    if (isInstalled(name)) return false; // another process installed it while we waited
    const say = (line) => quiet || process.stderr.write(`${line}\n`);
    say(`Installing ${part.what} into ${part.dir}/node_modules (once; npm ci --prefix ${part.dir}) …`);
    const started = Date.now();
    const npm = process.env.npm_execpath && process.env.npm_execpath.endsWith('.js') ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
    const result = spawnSync(npm[0], [...npm[1], 'ci', '--prefix', part.full, '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: root,
      encoding: 'utf8',
      stdio: quiet ? 'pipe' : ['ignore', 'inherit', 'inherit'],
    });
    if (result.status !== 0) {
      const output = quiet ? `\n${result.stdout}${result.stderr}` : '';
      throw new Error(`npm ci --prefix ${part.dir} failed (exit ${result.status ?? result.signal})${output}`);
    }
    writeFileSync(stampFile(part), `${lockHash(part)}\n`);
    say(`Installed ${part.dir} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    return true;
  });
}

module.exports = { EXTRAS, ensureExtra, isInstalled };

if (require.main === module) {
  const names = process.argv.slice(2);
  try {
    for (const name of names.length > 0 ? names : Object.keys(EXTRAS)) ensureExtra(name);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
