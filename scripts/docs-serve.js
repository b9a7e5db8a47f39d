#!/usr/bin/env node
// Serves the documentation site (`vitepress dev`, or `preview` of a build) on 127.0.0.1, on the port
// given by `--port <n>` (or `--port=<n>`), else DOCS_PORT, else 8001 (the spec's documentation port).
//   npm run docs -- --port 9000        DOCS_PORT=9000 npm run docs        npm run docs:preview -- --port 9000
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const DEFAULT_DOCS_PORT = 8001;

/** The port to serve on, from the arguments and the environment; throws on a value that is not a port. */
function docsPort(argv, env) {
  let given = env.DOCS_PORT;
  argv.forEach((argument, index) => {
    if (argument === '--port' || argument === '-p') given = argv[index + 1];
    else if (argument.startsWith('--port=')) given = argument.slice('--port='.length);
  });
  if (given === undefined || given === '') return DEFAULT_DOCS_PORT;
  const port = Number(given);
  if (!/^\d+$/.test(String(given)) || port < 1 || port > 65535) throw new Error(`Not a port: ${JSON.stringify(given)} (--port or DOCS_PORT: 1–65535).`);
  return port;
}

module.exports = { docsPort, DEFAULT_DOCS_PORT };

if (require.main === module) {
  const [mode = 'dev', ...rest] = process.argv.slice(2);
  let port;
  try {
    port = docsPort(rest, process.env);
  } catch (error) {
    console.error(error.message);
    process.exit(2);
  }
  const docs = path.resolve(__dirname, '..', 'docs');
  const vitepress = path.join(path.dirname(require.resolve('vitepress/package.json', { paths: [docs] })), 'bin', 'vitepress.js');
  const args = [vitepress, mode, docs, '--host', '127.0.0.1', '--port', String(port), ...(mode === 'dev' ? ['--strictPort'] : [])];
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
