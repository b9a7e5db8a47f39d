import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { RATE_LIMIT_KEYS } from '../../src/core/principal';
import { TEST_JWT_SECRET } from '../helpers/env';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

afterAll(removeTempDirs);

function load(env: Record<string, string>, yamlText?: string) {
  const cwd = makeTempDir();
  if (yamlText !== undefined) writeFileSync(path.join(cwd, 'config.yaml'), yamlText);
  return loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET, ...env }, cwd });
}

function refusal(env: Record<string, string>, yamlText?: string): string {
  try {
    load(env, yamlText);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

const MALFORMED = ['5', '5 per minute', '0/minute', '5/fortnight', '5.5/hour', '/minute', '5/'];

describe('rate-limit precedence: environment > config.yaml > built-in default (spec, Limits rule 2)', () => {
  const yamlText = 'api:\n  rate_limits:\n    auth_login: 7/minute\n    default: 60/minute\n';

  it('uses the spec defaults when nothing is set', () => {
    expect(load({}).config.api.rate_limits).toEqual({
      auth_register: '3/hour',
      auth_login: '5/minute',
      auth_refresh: '5/minute',
      saml_acs: '5/minute',
      default: '120/minute',
      channel_webhooks: '6000/minute',
    });
  });

  it('takes config.yaml over the defaults, key by key', () => {
    const limits = load({}, yamlText).config.api.rate_limits;
    expect(limits.auth_login).toBe('7/minute');
    expect(limits.default).toBe('60/minute');
    expect(limits.auth_register).toBe('3/hour');
  });

  it('takes SERVICE_RATE_LIMIT_<KEY> over config.yaml, for every key', () => {
    for (const key of RATE_LIMIT_KEYS) {
      const limits = load({ [`SERVICE_RATE_LIMIT_${key.toUpperCase()}`]: ' 11/Seconds ' }, yamlText).config.api.rate_limits;
      expect(limits[key]).toBe('11/Seconds');
      if (key !== 'auth_login') expect(limits.auth_login).toBe('7/minute');
    }
  });
});

describe('a malformed rate limit stops startup, naming the key and its source', () => {
  it.each(RATE_LIMIT_KEYS.flatMap((key) => MALFORMED.map((value) => [key, value])))('SERVICE_RATE_LIMIT_%s=%j', (key, value) => {
    const variable = `SERVICE_RATE_LIMIT_${key.toUpperCase()}`;
    const message = refusal({ [variable]: value });
    expect(message.startsWith(`api.rate_limits.${key} (from ${variable}): `)).toBe(true);
    expect(message).not.toContain('\n');
  });

  it.each(RATE_LIMIT_KEYS.flatMap((key) => MALFORMED.map((value) => [key, value])))('config.yaml %s: %j', (key, value) => {
    const message = refusal({}, `api:\n  rate_limits:\n    ${key}: ${JSON.stringify(value)}\n`);
    expect(message.startsWith(`api.rate_limits.${key} (from config.yaml): `)).toBe(true);
  });

  it('refuses a YAML number or list where a spec belongs', () => {
    expect(refusal({}, 'api:\n  rate_limits:\n    default: 120\n')).toMatch(/^api\.rate_limits\.default \(from config\.yaml\): /);
    expect(refusal({}, 'api:\n  rate_limits:\n    default: [5/minute]\n')).toMatch(/^api\.rate_limits\.default/);
  });

  it('refuses a malformed environment value even when config.yaml is fine', () => {
    expect(refusal({ SERVICE_RATE_LIMIT_AUTH_LOGIN: '5/fortnight' }, 'api:\n  rate_limits:\n    auth_login: 7/minute\n')).toBe(
      'api.rate_limits.auth_login (from SERVICE_RATE_LIMIT_AUTH_LOGIN): unknown window "fortnight": expected "<N>/<second|minute|hour|day>", e.g. "5/minute"',
    );
  });

  it('refuses a rate-limit variable for a route key that does not exist', () => {
    expect(refusal({ SERVICE_RATE_LIMIT_AUTH_LOGON: '5/minute' })).toMatch(/^api\.rate_limits\.auth_logon \(from SERVICE_RATE_LIMIT_AUTH_LOGON\): unknown key/);
  });
});

describe('trusted proxy CIDRs', () => {
  it('accepts CIDRs and single addresses, IPv4 and IPv6', () => {
    const cidrs = load({ SERVICE_TRUSTED_PROXY_CIDRS: '10.0.0.0/8, 127.0.0.1, fd00::/8, ::1' }).config.api.trusted_proxy_cidrs;
    expect(cidrs).toEqual(['10.0.0.0/8', '127.0.0.1', 'fd00::/8', '::1']);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/0', '10.0.0/8', '10.0.0.0/x', 'loopback', 'proxy.example.com', '300.1.1.1', 'fd00::/129', '127.1'])(
    'refuses %j naming the key and source',
    (entry) => {
      expect(refusal({ SERVICE_TRUSTED_PROXY_CIDRS: `10.0.0.0/8,${entry}` })).toMatch(
        new RegExp(`^api\\.trusted_proxy_cidrs \\(from SERVICE_TRUSTED_PROXY_CIDRS\\): "${entry.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" is not a CIDR`),
      );
      expect(refusal({}, `api:\n  trusted_proxy_cidrs: ["${entry}"]\n`)).toMatch(/^api\.trusted_proxy_cidrs \(from config\.yaml\): /);
    },
  );
});
