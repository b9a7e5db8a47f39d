import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { generateReferencePages } from '../../docs/generate';
import { cliProgram } from '../../docs/generate/cli-reference';
import { CHANNELS } from '../../adapters';
import { envBindingsFor, loadConfig } from '../../src/config';
import { ERROR_CODES, ERROR_STATUS } from '../../src/core/errors';
import { AGENT_STATES } from '../../src/core/events';
import { clientFrameSchemas } from '../../src/core/client-frames';
import { TEST_JWT_SECRET } from '../helpers/env';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * The site's reference pages are generated from the code (docs/generate/). These tests fail when a
 * committed page differs from what the generator produces now (run `npm run docs:generate`), and
 * check the pages on disk against the code by other routes than the generator's own, so a generator
 * that silently drops something fails too.
 */

const page = (name: string) => readFileSync(path.join(REPO_ROOT, 'docs/reference', name), 'utf8');

afterAll(removeTempDirs);

describe('generated reference pages', () => {
  it('match what the generator produces from the code now (else run npm run docs:generate)', async () => {
    const pages = await generateReferencePages(REPO_ROOT);
    expect([...pages.keys()].sort()).toEqual(['benchmarks', 'cli', 'configuration', 'errors', 'rest', 'websocket'].map((name) => `docs/reference/${name}.md`));
    const stale = [...pages].filter(([file, text]) => readFileSync(path.join(REPO_ROOT, file), 'utf8') !== text).map(([file]) => file);
    expect(stale).toEqual([]);
  });

  it('list every configuration key the hub loads, with its environment variable', () => {
    const text = page('configuration.md');
    // The loaded configuration object (not the schema the generator walks): every leaf key.
    const { config } = loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET }, cwd: makeTempDir(), channels: CHANNELS });
    const leaves: string[] = [];
    const walk = (value: unknown, prefix: string[]) => {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const [key, child] of Object.entries(value)) walk(child, [...prefix, key]);
      } else leaves.push(prefix.join('.'));
    };
    walk(config, []);
    expect(leaves.length).toBeGreaterThan(60);
    // Rows: | `yaml.key` [(env only)][<br>`SERVICE_ENV`] | default | meaning |
    const rows = new Map([...text.matchAll(/^\| `([a-z_.]+)`(?: \(env only\))?(?:<br>`(SERVICE_[A-Z_]+)`)? \|/gm)].map((row) => [row[1]!, row[2] ?? null]));
    expect(leaves.filter((key) => !rows.has(key))).toEqual([]);
    expect(
      envBindingsFor(CHANNELS)
        .filter((binding) => rows.get(binding.path.join('.')) !== binding.env)
        .map((binding) => binding.env),
    ).toEqual([]);
    // Every key config.yaml sets is documented too (the file is the other half of the source).
    const yamlLeaves: string[] = [];
    const walkYaml = (value: unknown, prefix: string[]) => {
      if (value !== null && typeof value === 'object' && !Array.isArray(value))
        for (const [key, child] of Object.entries(value)) walkYaml(child, [...prefix, key]);
      else yamlLeaves.push(prefix.join('.'));
    };
    walkYaml(parseYaml(readFileSync(path.join(REPO_ROOT, 'config.yaml'), 'utf8')), []);
    expect(yamlLeaves.filter((key) => !rows.has(key))).toEqual([]);
  });

  it('list every error code with its HTTP status', () => {
    const rows = new Map([...page('errors.md').matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((row) => [row[1]!, Number(row[2])]));
    expect(ERROR_CODES.filter((code) => rows.get(code) !== ERROR_STATUS[code])).toEqual([]);
    expect([...rows.keys()].filter((code) => !(code in ERROR_STATUS))).toEqual([]);
  });

  it('list every WebSocket frame type, agent state and confirmation action', () => {
    const text = page('websocket.md');
    const headings = [...text.matchAll(/^### `([a-z_]+)`$/gm)].map((row) => row[1]);
    const serverTypes = ['token', 'tool_start', 'tool_end', 'tool_confirm_request', 'agent_state', 'memory_update', 'error', 'done', 'pong'];
    expect(headings).toEqual(expect.arrayContaining([...serverTypes, ...Object.keys(clientFrameSchemas)]));
    for (const state of AGENT_STATES) expect(text).toContain(`\`${state}\``);
    for (const action of ['allow', 'deny', 'allow_all', 'disable', 'forbid_all', 'cancel']) expect(text).toMatch(new RegExp(`^\\| \`${action}\` \\|`, 'm'));
    for (const code of [1000, 1001, 1009, 1011, 4000, 4001, 4003, 4004]) expect(text).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });

  it('list every command of the CLI, as its --help shows it', async () => {
    const text = page('cli.md');
    const program = await cliProgram();
    const paths: string[] = [];
    const walk = (command: typeof program, prefix: string[]) => {
      for (const child of command.commands) {
        paths.push([...prefix, child.name()].join(' '));
        walk(child, [...prefix, child.name()]);
      }
    };
    walk(program, ['switchboard']);
    expect(paths.length).toBeGreaterThan(3);
    expect(paths.filter((name) => !text.includes(`## ${name}\n`))).toEqual([]);
    for (const command of program.commands.flatMap((child) => [child, ...child.commands])) {
      for (const option of command.options) expect(text).toContain(`\`${option.flags}\``);
    }
  });

  it('list every REST operation of the OpenAPI document', async () => {
    const text = page('rest.md');
    // Independently of the generator: every endpoint declared in src/api/routes with api.add({method, path}).
    const declared = new Set<string>();
    for (const file of readdirSync(path.join(REPO_ROOT, 'src/api/routes'))) {
      const source = readFileSync(path.join(REPO_ROOT, 'src/api/routes', file), 'utf8');
      for (const match of source.matchAll(/method: '(get|post|put|patch|delete)',\s*path: '([^']+)'/g))
        declared.add(`${match[1]!.toUpperCase()} \`/api/v1${match[2]}\``);
    }
    expect(declared.size).toBeGreaterThan(20);
    expect([...declared].filter((operation) => !text.includes(`### ${operation}`))).toEqual([]);
  });
});
