import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * A hub loads a platform's or a vendor's SDK only when its configuration uses it: an embedded hub
 * with the default config (builtin model, SQLite, no Redis, no channel but the web, no traces, no
 * MCP server) never loads @slack/bolt, telegraf, socket.io, the model vendors' SDKs, pg, ioredis,
 * bullmq, the OpenTelemetry SDK or the MCP SDK. Loaded eagerly they cost every start ~1.5 s on a
 * 2-core machine (each alone: bolt 0.30 s, anthropic 0.36, MCP 0.26, bullmq 0.22, OTel 0.3).
 * Checked by what a started hub has loaded, not by a timing.
 */
const LAZY_PACKAGES = [
  '@slack/bolt',
  'telegraf',
  'socket.io',
  'openai',
  '@anthropic-ai/sdk',
  'pg',
  'ioredis',
  'bullmq',
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-http',
  '@modelcontextprotocol/sdk',
];

afterAll(() => removeTempDirs());

it('an embedded hub with the default configuration loads none of the optional SDKs', () => {
  const dir = makeTempDir();
  const script = `
    const { startService } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist/src/main.js'))});
    const env = { SERVICE_JWT_SECRET: 'a'.repeat(64), SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0', SERVICE_DATA_DIR: ${JSON.stringify(dir)}, SERVICE_LOG_LEVEL: 'warn' };
    startService({ env, cwd: ${JSON.stringify(dir)} }).then(async (service) => {
      const packages = new Set(Object.keys(require.cache).filter((file) => file.includes('/node_modules/')).map((file) => {
        const parts = file.split('/node_modules/').pop().split('/');
        return parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0];
      }));
      await service.stop();
      console.error(JSON.stringify([...packages]));
    });
  `;
  const started = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: dir, timeout: 60_000 });
  expect(started.status).toBe(0);
  const loaded = JSON.parse(started.stderr.trim().split('\n').pop()!) as string[];
  expect(loaded).toEqual(expect.arrayContaining(['express', 'sequelize', 'sqlite3', 'ws']));
  expect(loaded.filter((name) => LAZY_PACKAGES.includes(name))).toEqual([]);
}, 90_000);
