#!/usr/bin/env node
// `npm start` on a fresh clone: the hub refuses to start without SERVICE_JWT_SECRET, so for local
// development this writes a random one to .env (git-ignored) the first time. Skipped when the secret
// is already in the environment or .env, and when NODE_ENV=production (set the secret yourself there).
'use strict';
const { existsSync, readFileSync, appendFileSync } = require('node:fs');
const { randomBytes } = require('node:crypto');
const { parseEnv } = require('node:util');

const file = '.env';
if (process.env.SERVICE_JWT_SECRET || process.env.NODE_ENV === 'production') process.exit(0);
const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
if (parseEnv(current).SERVICE_JWT_SECRET) process.exit(0);

const separator = current === '' || current.endsWith('\n') ? '' : '\n';
appendFileSync(file, `${separator}# Written by \`npm start\` for local development. Keep it secret.\nSERVICE_JWT_SECRET=${randomBytes(32).toString('hex')}\n`, {
  mode: 0o600,
});
process.stderr.write('switchboard: wrote a random SERVICE_JWT_SECRET to .env for local development\n');
