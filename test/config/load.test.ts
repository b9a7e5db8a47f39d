import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CHANNELS } from '../../adapters';
import { ConfigError, envBindingsFor, loadConfig } from '../../src/config';
import { TEST_JWT_SECRET } from '../helpers/env';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

const REPO_ROOT = path.resolve(__dirname, '../..');

afterAll(removeTempDirs);

/** A working directory holding the given config.yaml text (or none). */
function dirWithConfig(yamlText?: string): string {
  const dir = makeTempDir();
  if (yamlText !== undefined) writeFileSync(path.join(dir, 'config.yaml'), yamlText);
  return dir;
}

function load(env: Record<string, string>, yamlText?: string) {
  return loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, ...env }, cwd: dirWithConfig(yamlText), channels: CHANNELS });
}

function refusal(env: Record<string, string | undefined>, yamlText?: string): string {
  try {
    loadConfig({ env, cwd: dirWithConfig(yamlText), channels: CHANNELS });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('precedence: environment over config.yaml over built-in defaults', () => {
  it('uses the built-in default when neither sets a key', () => {
    const { config } = load({});
    expect(config.server.port).toBe(8000);
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.redis.prefix).toBe('switchboard');
    expect(config.api.rate_limits.auth_login).toBe('5/minute');
  });

  it('takes config.yaml over the default', () => {
    const { config } = load({}, 'server:\n  port: 9001\nredis:\n  prefix: hub-a\n');
    expect(config.server.port).toBe(9001);
    expect(config.redis.prefix).toBe('hub-a');
  });

  it('takes the environment over config.yaml', () => {
    const { config } = load(
      { SERVICE_PORT: '9100', SERVICE_REDIS_PREFIX: 'hub-b', SERVICE_RATE_LIMIT_AUTH_LOGIN: '9/minute' },
      'server:\n  port: 9001\nredis:\n  prefix: hub-a\napi:\n  rate_limits:\n    auth_login: 7/minute\n',
    );
    expect(config.server.port).toBe(9100);
    expect(config.redis.prefix).toBe('hub-b');
    expect(config.api.rate_limits.auth_login).toBe('9/minute');
  });

  it('converts typed environment values: integers, booleans and comma-separated lists', () => {
    const { config } = load({
      SERVICE_EMBEDDED_WORKER: 'false',
      SERVICE_LLM_CONTEXT_WINDOW: '32768',
      SERVICE_TRUSTED_PROXY_CIDRS: '10.0.0.0/8, 192.168.0.0/16',
    });
    expect(config.worker.embedded).toBe(false);
    expect(config.llm.context_window).toBe(32768);
    expect(config.api.trusted_proxy_cidrs).toEqual(['10.0.0.0/8', '192.168.0.0/16']);
  });

  it('lets SERVICE_SHARED_STORE_URL win over api.shared_store_url, and an empty value clear it', () => {
    const yamlText = 'api:\n  shared_store_url: redis://yaml-host:6379\n';
    expect(load({}, yamlText).config.api.shared_store_url).toBe('redis://yaml-host:6379');
    expect(load({ SERVICE_SHARED_STORE_URL: 'redis://env-host:6379' }, yamlText).config.api.shared_store_url).toBe('redis://env-host:6379');
    expect(load({ SERVICE_SHARED_STORE_URL: '' }, yamlText).config.api.shared_store_url).toBeNull();
  });

  it('reads the file named by SERVICE_CONFIG_FILE', () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'elsewhere.yaml');
    writeFileSync(file, 'log:\n  level: debug\n');
    const { config, configFile } = loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_CONFIG_FILE: file }, channels: CHANNELS });
    expect(config.log.level).toBe('debug');
    expect(configFile).toBe(file);
  });

  it('recognises every environment variable named in decisions.md §7', () => {
    // Copied from ../shared/spec/decisions.md §7 (Operations).
    const named = [
      'SERVICE_JWT_SECRET',
      'SERVICE_HOST',
      'SERVICE_PORT',
      'SERVICE_DATA_DIR',
      'SERVICE_DATABASE_URL',
      'SERVICE_REDIS_URL',
      'SERVICE_REDIS_PREFIX',
      'SERVICE_SHARED_STORE_URL',
      'SERVICE_LOG_LEVEL',
      'SERVICE_LLM_PROVIDER',
      'SERVICE_LLM_BASE_URL',
      'SERVICE_LLM_API_KEY',
      'SERVICE_LLM_MODEL',
      'SERVICE_LLM_CONTEXT_WINDOW',
      'SERVICE_SLACK_BOT_TOKEN',
      'SERVICE_SLACK_SIGNING_SECRET',
      'SERVICE_SLACK_APP_TOKEN',
      'SERVICE_TELEGRAM_BOT_TOKEN',
      'SERVICE_TELEGRAM_WEBHOOK_SECRET',
      'SERVICE_SLACK_API_URL',
      'SERVICE_TELEGRAM_API_ROOT',
      'SERVICE_EMBEDDED_WORKER',
      'SERVICE_CONFIG_FILE',
    ];
    const bound = new Set([...envBindingsFor(CHANNELS).map((binding) => binding.env), 'SERVICE_CONFIG_FILE']);
    expect(named.filter((name) => !bound.has(name))).toEqual([]);
  });

  it('returns a deeply frozen object', () => {
    const { config } = load({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.api.rate_limits)).toBe(true);
    expect(() => {
      (config.server as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it('warns about an unknown SERVICE_* variable instead of ignoring it silently', () => {
    const { warnings } = load({ SERVICE_PROT: '1' });
    expect(warnings).toEqual(['unknown environment variable SERVICE_PROT is ignored']);
  });
});

describe('the shipped config.yaml', () => {
  const shipped = parseYaml(readFileSync(path.join(REPO_ROOT, 'config.yaml'), 'utf8')) as Record<string, unknown>;

  it('states exactly the built-in defaults', () => {
    const fromFile = loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET }, cwd: REPO_ROOT, channels: CHANNELS }).config;
    const defaults = load({}).config;
    expect(fromFile).toEqual(defaults);
  });

  it('mentions every key of the configuration, with a comment', () => {
    const text = readFileSync(path.join(REPO_ROOT, 'config.yaml'), 'utf8');
    const keys = (value: unknown, at: string[]): string[] =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.entries(value).flatMap(([name, child]) => [name, ...keys(child, [...at, name])])
        : [];
    for (const key of new Set(keys(load({}).config, []))) {
      expect({ key, found: new RegExp(`^\\s*#?.*\\b${key}\\b`, 'm').test(text) }).toEqual({ key, found: true });
    }
    expect(Object.keys(shipped).sort()).toEqual(Object.keys(load({}).config).sort());
  });
});

describe('startup refusals name the key in one line', () => {
  it('refuses a missing SERVICE_JWT_SECRET', () => {
    const message = refusal({});
    expect(message).toMatch(/^SERVICE_JWT_SECRET: is required/);
    expect(message).not.toContain('\n');
  });

  it('refuses a short SERVICE_JWT_SECRET without echoing it', () => {
    const message = refusal({ SERVICE_JWT_SECRET: 'abc123abc123' });
    expect(message).toMatch(/^SERVICE_JWT_SECRET: must be a hex string of at least 32 characters/);
    expect(message).not.toContain('abc123abc123');
  });

  it('refuses a long secret that is not hex', () => {
    expect(refusal({ SERVICE_JWT_SECRET: 'z'.repeat(64) })).toMatch(/^SERVICE_JWT_SECRET: must be a hex string/);
  });

  it('refuses config.yaml that is not valid YAML, with the line', () => {
    const message = refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET }, 'server:\n  port: [8000\n');
    expect(message).toMatch(/^config\.yaml: not valid YAML at line \d+/);
    expect(message).not.toContain('\n');
  });

  it('refuses a top level that is not a mapping', () => {
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET }, '- a\n- b\n')).toMatch(/top level must be a mapping/);
  });

  it('refuses an invalid value from config.yaml, naming key and file', () => {
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET }, 'server:\n  port: 70000\n')).toMatch(/^server\.port \(from config\.yaml\): /);
  });

  it('refuses an invalid value from the environment, naming key and variable', () => {
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_PORT: 'eighty' })).toBe('server.port (from SERVICE_PORT): expected an integer, got "eighty"');
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_LOG_LEVEL: 'loud' })).toMatch(/^log\.level \(from SERVICE_LOG_LEVEL\): /);
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_EMBEDDED_WORKER: 'maybe' })).toMatch(
      /^worker\.embedded \(from SERVICE_EMBEDDED_WORKER\): expected true or false/,
    );
  });

  it('refuses an unknown key in config.yaml (a typo must not fall back to a default)', () => {
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET }, 'server:\n  prot: 9000\n')).toMatch(/^server\.prot \(from config\.yaml\): unknown key/);
  });

  it('refuses a secret written into config.yaml, pointing at its variable', () => {
    const message = refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET }, 'auth:\n  jwt_secret: deadbeefdeadbeefdeadbeefdeadbeef\n');
    expect(message).toBe('auth.jwt_secret (in config.yaml): secrets are read only from the environment; set SERVICE_JWT_SECRET instead');
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET }, 'llm:\n  api_key: sk-123\n')).toMatch(/SERVICE_LLM_API_KEY/);
  });

  it('refuses a SERVICE_CONFIG_FILE that does not exist', () => {
    expect(refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_CONFIG_FILE: '/nonexistent/config.yaml' })).toMatch(/^SERVICE_CONFIG_FILE: no such file/);
  });

  it('refuses a database URL that is not PostgreSQL without echoing it', () => {
    const message = refusal({ SERVICE_JWT_SECRET: TEST_JWT_SECRET, SERVICE_DATABASE_URL: 'mysql://root:hunter2@db/x' });
    expect(message).toMatch(/^SERVICE_DATABASE_URL: must be a postgres/);
    expect(message).not.toContain('hunter2');
  });
});
