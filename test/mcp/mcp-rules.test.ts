import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { CHANNELS } from '../../adapters';
import { pinsTool } from '../../src/agent/tools/pins';
import { globMatches, passesFilter } from '../../src/agent/tools/tool-globs';
import { ConfigError, loadConfig } from '../../src/config';
import { mcpToolNeedsConfirmation } from '../../src/mcp/confirm-rule';
import { definitionHash } from '../../src/mcp/definition-pins';
import { MODEL_TOOL_NAME_MAX, modelToolName } from '../../src/mcp/model-names';
import { TEST_JWT_SECRET } from '../helpers/env';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

describe('the confirmation rule of an MCP tool (fail-closed)', () => {
  const readOnly = { readOnlyHint: true };
  it.each([
    ['always', [], readOnly, true],
    ['always', ['echo'], undefined, false],
    ['always', ['ec*'], undefined, false],
    ['never', [], { destructiveHint: true }, false],
    ['read_only_auto', [], readOnly, false],
    ['read_only_auto', [], { readOnlyHint: true, destructiveHint: true }, true],
    ['read_only_auto', [], { readOnlyHint: false }, true],
    ['read_only_auto', [], undefined, true],
  ] as const)('confirm %s, auto_approve %j, hints %j → asks: %s', (confirm, autoApprove, hints, asks) => {
    expect(mcpToolNeedsConfirmation({ confirm, auto_approve: autoApprove }, 'echo', hints)).toBe(asks);
  });
});

describe('names and globs', () => {
  it('names a tool <server>__<tool>, sanitised, at most 64 characters, unique', () => {
    expect(modelToolName('docs', 'search', new Set())).toBe('docs__search');
    expect(modelToolName('docs', 'search.pages v2', new Set())).toBe('docs__search_pages_v2');
    const long = modelToolName('docs', 'x'.repeat(100), new Set());
    expect(long).toHaveLength(MODEL_TOOL_NAME_MAX);
    expect(modelToolName('docs', 'a.b', new Set(['docs__a_b']))).toBe('docs__a_b_2');
    expect(modelToolName('docs', 'x'.repeat(100), new Set([long]))).toMatch(/^docs__x+_2$/);
    expect(modelToolName('docs', 'x'.repeat(100), new Set([long])).length).toBe(MODEL_TOOL_NAME_MAX);
  });

  it('matches globs with * and ?, everything else literally', () => {
    expect(globMatches('search_*', 'search_pages')).toBe(true);
    expect(globMatches('search_*', 'research_pages')).toBe(false);
    expect(globMatches('get-su?', 'get-sum')).toBe(true);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(passesFilter({ include: ['*'], exclude: ['write_*'] }, 'write_file')).toBe(false);
    expect(passesFilter({ include: ['read_*'], exclude: [] }, 'list_directory')).toBe(false);
  });

  it('pins an MCP tool by <server>.<tool> or <server>.<glob>, never by its model name', () => {
    const echo = { name: 'everything__echo', source: { server: 'everything', tool: 'echo' } };
    expect(pinsTool(['everything.echo'], echo)).toBe(true);
    expect(pinsTool(['everything.*'], echo)).toBe(true);
    expect(pinsTool(['everything__echo'], echo)).toBe(false);
    expect(pinsTool(['other.*'], echo)).toBe(false);
    expect(pinsTool(['current_time'], { name: 'current_time' })).toBe(true);
  });

  it('hashes a definition canonically: key order is no change, a description change is', () => {
    const a = definitionHash({ name: 't', description: 'd', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } });
    const b = definitionHash({ name: 't', description: 'd', inputSchema: { properties: { x: { type: 'string' } }, type: 'object' } });
    expect(a).toBe(b);
    expect(definitionHash({ name: 't', description: 'e', inputSchema: { type: 'object' } })).not.toBe(a);
  });
});

describe('mcp.servers in config.yaml', () => {
  function load(yamlText: string, env: Record<string, string> = {}) {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, 'config.yaml'), yamlText);
    return loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, ...env }, cwd: dir, channels: CHANNELS }).config;
  }
  function refusal(yamlText: string, env: Record<string, string> = {}): string {
    try {
      load(yamlText, env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a refusal');
  }

  it('takes stdio and Streamable HTTP servers with their defaults, ${VAR} from the environment', () => {
    const config = load(
      [
        'mcp:',
        '  servers:',
        '    everything: { command: node, args: [server.js, "--token=${TOKEN}"] }',
        '    docs:',
        '      url: http://127.0.0.1:3001/mcp',
        '      headers: { Authorization: "Bearer ${DOCS_MCP_TOKEN}" }',
        '      tools: { include: ["search_*"] }',
        '      confirm: read_only_auto',
        '      auto_approve: [search_pages]',
        '      timeout_s: 10',
      ].join('\n'),
      { TOKEN: 'abc', DOCS_MCP_TOKEN: 'secret-token' },
    );
    expect(config.mcp.servers.everything).toEqual({
      command: 'node',
      args: ['server.js', '--token=abc'],
      env: {},
      cwd: null,
      tools: { include: ['*'], exclude: [] },
      confirm: 'always',
      auto_approve: [],
      timeout_s: 30,
    });
    expect(config.mcp.servers.docs).toMatchObject({
      headers: { Authorization: 'Bearer secret-token' },
      tools: { include: ['search_*'], exclude: [] },
      timeout_s: 10,
    });
  });

  it.each([
    ['mcp:\n  servers:\n    Bad_Name: { command: node }', /mcp\.servers\.Bad_Name.*server name/],
    ['mcp:\n  servers:\n    a: { args: [x] }', /mcp\.servers\.a: .*`command` \(stdio\) or `url`/],
    ['mcp:\n  servers:\n    a: { command: node, url: "http://x/mcp" }', /mcp\.servers\.a/],
    ['mcp:\n  servers:\n    a: { command: node, confirm: sometimes }', /mcp\.servers\.a\.confirm .*"always"\|"never"\|"read_only_auto"/],
    ['mcp:\n  servers:\n    a: { command: node, header: {} }', /mcp\.servers\.a\.header: unknown key for a stdio server/],
    ['mcp:\n  servers:\n    a: { url: "ftp://x/mcp" }', /mcp\.servers\.a/],
    ['mcp:\n  servers:\n    a: { command: node, timeout_s: 0 }', /mcp\.servers\.a/],
  ])('refuses %j with a clear error', (yamlText, message) => {
    expect(refusal(yamlText)).toMatch(message);
  });

  it('names a missing variable, never a value', () => {
    const message = refusal('mcp:\n  servers:\n    docs:\n      url: http://x/mcp\n      headers: { Authorization: "Bearer ${DOCS_MCP_TOKEN}" }\n');
    expect(message).toBe('mcp.servers.docs.headers.Authorization: ${DOCS_MCP_TOKEN} is not set in the environment');
  });
});
