#!/usr/bin/env node
// The npm registry mirror this project is developed on carries only the Linux builds of packages that
// ship per-platform binaries (@swc/core-darwin-arm64 and the like answer 404). `npm install` then writes
// a lockfile without those optional entries, and `npm ci` refuses it ("Missing: … from lock file").
// This restores each missing optional platform entry with its version and os/cpu/libc, exactly as a
// lockfile written against the full registry has it, so `npm ci` accepts the lockfile and skips them
// on a non-matching platform. Run it after every `npm install` that changes package-lock.json:
//   npm run lockfile:complete      (the root's lockfile and those of the parts installed on first use:
//                                    docs/ and extras/webchat-widget/, see scripts/install-extra.js)
//   node scripts/complete-lockfile.js <package-lock.json>…
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'sunos', 'netbsd', 'openbsd', 'aix'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'];

/** `@swc/core-linux-arm-gnueabihf` → { os: ['linux'], cpu: ['arm'], libc: ['glibc'] } */
function platformOf(name) {
  const tokens = name.split('/').pop().split('-');
  const os = tokens.find((token) => OS.includes(token));
  const cpu = tokens.find((token) => CPU.includes(token));
  if (!os || !cpu) return null;
  const platform = { cpu: [cpu], os: [os] };
  if (os === 'linux') {
    if (tokens.some((token) => token.startsWith('musl'))) platform.libc = ['musl'];
    else if (tokens.some((token) => token.startsWith('gnu'))) platform.libc = ['glibc'];
  }
  return platform;
}

/** Restores the missing optional platform entries of one lockfile; returns how many. */
function complete(file) {
  const lock = JSON.parse(readFileSync(file, 'utf8'));
  const packages = lock.packages;
  let added = 0;
  for (const [location, entry] of Object.entries(packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const hoisted = `node_modules/${name}`;
      const nested = `${location}/node_modules/${name}`;
      if (packages[hoisted] || packages[nested]) continue;
      const platform = platformOf(name);
      if (!platform || !/^\d+\.\d+\.\d+/.test(version)) {
        throw new Error(`cannot complete ${name}@${version} (needed by ${location || 'the root'}): not a platform binary with a pinned version`);
      }
      packages[hoisted] = { version, ...platform, ...(entry.dev ? { dev: true } : {}), optional: true };
      added += 1;
    }
  }
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  return added;
}

for (const file of process.argv.length > 2 ? process.argv.slice(2) : ['package-lock.json']) {
  const added = complete(file);
  process.stdout.write(`${file}: ${added} optional platform entr${added === 1 ? 'y' : 'ies'} restored\n`);
}
