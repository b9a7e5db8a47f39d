import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type { z } from 'zod';
import {
  OTHER_KNOWN_ENV,
  RATE_LIMIT_ENV_PREFIX,
  YAML_ALLOWED_SECRET_PATHS,
  envBindingsFor,
  isSecretPath,
  type ChannelSections,
  type EnvBinding,
} from './env-bindings';
import { ConfigError } from './config-error';
import { expandMcpVariables } from './mcp-expand';
import { configSchemaFor, type Config } from './schema';

export const DEFAULT_CONFIG_FILE = 'config.yaml';

export { ConfigError };

export interface LoadedConfig {
  config: Readonly<Config>;
  /** The config file that was read, or null when none exists. */
  configFile: string | null;
  /** Non-fatal findings to log once a logger exists (e.g. unknown SERVICE_* variables). */
  warnings: string[];
}

export interface LoadConfigOptions {
  env: Record<string, string | undefined>;
  /** Directory relative paths are resolved against (the process's working directory). */
  cwd?: string;
  /**
   * The channels whose `channels.<name>` sections (and `SERVICE_*` variables) this hub knows: the
   * registry's, adapters/index.ts. Without them a `channels:` section is refused as unknown.
   */
  channels?: ChannelSections;
}

type Tree = Record<string, unknown>;

/**
 * Reads config.yaml (path from SERVICE_CONFIG_FILE), lays the SERVICE_* environment over it and
 * validates the result against the schema's defaults. Throws ConfigError on the first problem.
 */
export function loadConfig({ env, cwd = process.cwd(), channels = [] }: LoadConfigOptions): LoadedConfig {
  const bindings = envBindingsFor(channels);
  const explicitFile = nonEmpty(env.SERVICE_CONFIG_FILE);
  const configFile = path.resolve(cwd, explicitFile ?? DEFAULT_CONFIG_FILE);
  const sources = new Map<string, string>();

  let tree: Tree = {};
  let fileRead: string | null = null;
  if (existsSync(configFile)) {
    tree = readYaml(configFile);
    fileRead = configFile;
    recordYamlSources(tree, [], path.basename(configFile), sources, bindings);
  } else if (explicitFile !== undefined) {
    throw new ConfigError(`SERVICE_CONFIG_FILE: no such file: ${configFile}`);
  }

  const warnings: string[] = [];
  for (const binding of bindings) applyEnvBinding(tree, binding, env, sources);
  applyRateLimitEnv(tree, env, sources);
  expandMcpVariables(tree, env);
  for (const name of Object.keys(env)) {
    if (name.startsWith('SERVICE_') && !isKnownEnv(name, bindings)) {
      warnings.push(`unknown environment variable ${name} is ignored`);
    }
  }

  const result = configSchemaFor(channels).safeParse(tree);
  if (!result.success) throw new ConfigError(describeIssues(result.error.issues, sources, bindings));
  return { config: deepFreeze(result.data), configFile: fileRead, warnings };
}

function readYaml(file: string): Tree {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` at line ${error.linePos[0].line}` : '';
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new ConfigError(`${path.basename(file)}: not valid YAML${where}: ${reason}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`${path.basename(file)}: the top level must be a mapping of sections`);
  }
  return parsed as Tree;
}

function recordYamlSources(node: unknown, at: string[], fileName: string, sources: Map<string, string>, bindings: readonly EnvBinding[]): void {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) {
    const key = at.join('.');
    // `null` is the documented default (config.yaml shows `url: null`); a value is what is refused.
    if (node !== null && isSecretPath(key, bindings) && !YAML_ALLOWED_SECRET_PATHS.has(key)) {
      const binding = bindings.find((b) => b.path.join('.') === key);
      throw new ConfigError(`${key} (in ${fileName}): secrets are read only from the environment; set ${binding?.env} instead`);
    }
    sources.set(key, fileName);
    return;
  }
  for (const [name, child] of Object.entries(node)) recordYamlSources(child, [...at, name], fileName, sources, bindings);
}

function applyEnvBinding(tree: Tree, binding: EnvBinding, env: LoadConfigOptions['env'], sources: Map<string, string>): void {
  const raw = env[binding.env];
  if (raw === undefined) return;
  const value = convertEnv(binding, raw);
  if (value === undefined) return;
  setPath(tree, binding.path, value);
  sources.set(binding.path.join('.'), binding.env);
}

/** Converts an environment string to the key's type; undefined means "treat as unset". */
function convertEnv(binding: EnvBinding, raw: string): unknown {
  const text = raw.trim();
  const key = binding.path.join('.');
  switch (binding.kind) {
    case 'string':
      return text === '' ? undefined : text;
    case 'nullable-string':
      return text === '' ? null : text;
    case 'int':
      if (text === '') return undefined;
      if (!/^-?\d+$/.test(text)) {
        throw new ConfigError(`${key} (from ${binding.env}): expected an integer, got ${JSON.stringify(text)}`);
      }
      return Number(text);
    case 'bool': {
      if (text === '') return undefined;
      const lowered = text.toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(lowered)) return true;
      if (['0', 'false', 'no', 'off'].includes(lowered)) return false;
      throw new ConfigError(`${key} (from ${binding.env}): expected true or false, got ${JSON.stringify(text)}`);
    }
    case 'list':
      return text === ''
        ? []
        : text
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '');
  }
}

function applyRateLimitEnv(tree: Tree, env: LoadConfigOptions['env'], sources: Map<string, string>): void {
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(RATE_LIMIT_ENV_PREFIX) || raw === undefined) continue;
    const routeKey = name.slice(RATE_LIMIT_ENV_PREFIX.length).toLowerCase();
    setPath(tree, ['api', 'rate_limits', routeKey], raw);
    sources.set(`api.rate_limits.${routeKey}`, name);
  }
}

function isKnownEnv(name: string, bindings: readonly EnvBinding[]): boolean {
  return OTHER_KNOWN_ENV.has(name) || name.startsWith(RATE_LIMIT_ENV_PREFIX) || bindings.some((binding) => binding.env === name);
}

function setPath(tree: Tree, at: readonly string[], value: unknown): void {
  let node = tree;
  for (const name of at.slice(0, -1)) {
    const child = node[name];
    if (child === null || typeof child !== 'object' || Array.isArray(child)) node[name] = {};
    node = node[name] as Tree;
  }
  node[at[at.length - 1]!] = value;
}

function describeIssues(issues: readonly z.core.$ZodIssue[], sources: Map<string, string>, bindings: readonly EnvBinding[]): string {
  const [first] = issues;
  if (!first) return 'invalid configuration';
  let key = first.path.map(String).join('.');
  let reason = first.message;
  // An unknown key is reported on its parent; name the key itself.
  if (first.code === 'unrecognized_keys') {
    key = [...first.path.map(String), first.keys[0]].filter(Boolean).join('.');
    reason = 'unknown key (check the spelling against config.yaml)';
  }
  // Secrets are named by their environment variable: that is the only place they can be set.
  const label = isSecretPath(key, bindings) ? (bindings.find((b) => b.path.join('.') === key)?.env ?? key) : key;
  const source = sources.get(key);
  const from = source && source !== label ? ` (from ${source})` : '';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return `${label || 'configuration'}${from}: ${reason}${more}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
