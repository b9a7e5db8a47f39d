import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, parseDocument, type Pair, type YAMLMap } from 'yaml';
import { z } from 'zod';
import { CHANNELS } from '../../adapters';
import { envBindingsFor, OTHER_KNOWN_ENV, RATE_LIMIT_ENV_PREFIX, YAML_ALLOWED_SECRET_PATHS } from '../../src/config/env-bindings';
import { configSchemaFor, JWT_SECRET_MIN_HEX } from '../../src/config/schema';
import { cell, code, generatedBanner, table } from './markdown';
import { repoRoot } from './repo';

/** One leaf of the configuration: a key that holds a value, not a section. */
export interface ConfigKey {
  /** Dotted YAML path, e.g. `server.port`. */
  path: string;
  env: string | null;
  secret: boolean;
  /** Secrets may only come from the environment (config.yaml refuses them), with one spec exception. */
  yamlAllowed: boolean;
  type: string;
  default: unknown;
  meaning: string;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  items?: JsonSchema;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  pattern?: string;
  minLength?: number;
};

/**
 * Every key of the config schema (src/config/schema.ts, with each registry channel's section from
 * adapters/<name>/settings.ts) with its environment variable (src/config/env-bindings.ts and the
 * channels'), default (the schema's own, by parsing an empty config) and meaning
 * (config.yaml's comment above the key). A key without a meaning is an error: document it in
 * config.yaml.
 */
export function configKeys(root = repoRoot()): ConfigKey[] {
  const configSchema = configSchemaFor(CHANNELS);
  const bindings = envBindingsFor(CHANNELS);
  const schema = z.toJSONSchema(configSchema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
  // Types as written (a rate limit is a string before its transform); the output schema covers the
  // sections behind a preprocess (auth), which the input schema cannot describe.
  const inputSchema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const defaults = configSchema.parse({ auth: { jwt_secret: '0'.repeat(JWT_SECRET_MIN_HEX) } }) as Record<string, unknown>;
  const meanings = yamlMeanings(readFileSync(path.join(root, 'config.yaml'), 'utf8'));
  const keys: ConfigKey[] = [];
  const walk = (node: JsonSchema, prefix: string[]) => {
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      const keyPath = [...prefix, name];
      if (child.type === 'object' && child.properties) {
        walk(child, keyPath);
        continue;
      }
      const dotted = keyPath.join('.');
      const binding = bindings.find((entry) => entry.path.join('.') === dotted);
      const rateLimitKey = prefix.join('.') === 'api.rate_limits' ? `${RATE_LIMIT_ENV_PREFIX}${name.toUpperCase()}` : null;
      const secret = binding?.secret === true;
      const meaning = meanings.get(dotted);
      if (!meaning) throw new Error(`docs generator: config key ${dotted} has no comment in config.yaml; describe it there`);
      keys.push({
        path: dotted,
        env: binding?.env ?? rateLimitKey,
        secret,
        yamlAllowed: !secret || YAML_ALLOWED_SECRET_PATHS.has(dotted),
        type: typeAt(inputSchema, keyPath) ?? describeType(child),
        default: dotted === 'auth.jwt_secret' ? undefined : valueAt(defaults, keyPath),
        meaning,
      });
    }
  };
  walk(schema, []);
  return keys;
}

function valueAt(object: Record<string, unknown>, keyPath: readonly string[]): unknown {
  return keyPath.reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], object);
}

function typeAt(schema: JsonSchema, keyPath: readonly string[]): string | null {
  let node: JsonSchema | undefined = schema;
  for (const key of keyPath) node = node?.properties?.[key];
  const described = node ? describeType(node) : 'any';
  return described === 'any' ? null : described;
}

function describeType(node: JsonSchema): string {
  if (node.anyOf) {
    const parts = node.anyOf.filter((option) => option.type !== 'null').map(describeType);
    const nullable = node.anyOf.some((option) => option.type === 'null');
    return `${parts.join(' or ')}${nullable ? ' or null' : ''}`;
  }
  if (node.enum) return node.enum.map((value) => code(String(value))).join(', ');
  if (node.type === 'array') return `list of ${describeType(node.items ?? {})}s`;
  if (node.type === 'string') return node.format === 'uri' ? 'URL' : 'string';
  if (node.type === 'integer' || node.type === 'number') {
    const bounds: string[] = [];
    if (node.exclusiveMinimum === 0) bounds.push('≥ 1');
    else if (node.minimum !== undefined) bounds.push(`≥ ${node.minimum}`);
    if (node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER) bounds.push(`≤ ${node.maximum}`);
    return `${node.type}${bounds.length ? ` ${bounds.join(', ')}` : ''}`;
  }
  if (node.type === 'boolean') return 'boolean';
  if (node.type === 'object') return 'object';
  return 'any';
}

/**
 * Meanings from config.yaml's comments: the comment above a key, without its `Env: …` note. A key
 * without a comment of its own shares its previous sibling's (`issuer`/`audience`), or, when no
 * sibling has one, its section's (`api.rate_limits.*`). Secrets are not in the file as keys: their
 * comments start `name: secret, env only` (or `a, b: secrets, env only`) and are cut out of the
 * comment they sit in.
 */
export function yamlMeanings(text: string): Map<string, string> {
  const meanings = new Map<string, string>();
  const document = parseDocument(text);
  const visit = (map: YAMLMap, prefix: string[], mapComment: string | null) => {
    const items = map.items as Pair[];
    const own: (string | null)[] = items.map((pair, index) => {
      const raw = (isScalar(pair.key) ? pair.key.commentBefore : null) ?? (index === 0 ? (map.commentBefore ?? null) : null);
      if (!raw) return null;
      const { rest, secrets } = splitSecretComments(raw);
      for (const [name, meaning] of secrets) meanings.set([...prefix, name].join('.'), meaning);
      return rest;
    });
    const anyOwn = own.some((comment) => comment !== null);
    items.forEach((pair, index) => {
      const name = String((pair.key as { value: unknown }).value);
      const keyPath = [...prefix, name];
      // A section recurses; an empty map (`users: {}`, a key of free names) is a key like any other.
      if (isMap(pair.value) && pair.value.items.length > 0) {
        visit(pair.value, keyPath, own[index] ?? null);
        return;
      }
      let meaning = own[index];
      if (!meaning && anyOwn)
        meaning =
          own
            .slice(0, index)
            .reverse()
            .find((comment) => comment !== null) ?? null;
      if (!meaning) meaning = mapComment;
      if (meaning && !meanings.has(keyPath.join('.'))) meanings.set(keyPath.join('.'), meaning);
    });
  };
  if (isMap(document.contents)) visit(document.contents, [], null);
  return meanings;
}

const SECRET_COMMENT = /^([a-z_]+(?:, [a-z_]+)*): secrets?, env only(?: and required)?(?: \((SERVICE_[A-Z_, ]+)\))?[.,:]?\s*(.*)$/;

function splitSecretComments(raw: string): { rest: string | null; secrets: [string, string][] } {
  const lines = raw.split('\n').map((line) => line.trim());
  const kept: string[] = [];
  const secrets: [string, string][] = [];
  for (let index = 0; index < lines.length; index++) {
    const match = SECRET_COMMENT.exec(lines[index]!);
    if (!match) {
      kept.push(lines[index]!);
      continue;
    }
    const text = [match[3]!];
    // The secret's note runs on while a line is unfinished (no full stop) and the next continues it.
    while (index + 1 < lines.length && continues(text[text.length - 1]!, lines[index + 1]!)) {
      text.push(lines[++index]!);
    }
    const note = capitalise(
      text
        .join(' ')
        .trim()
        .replace(/^SERVICE_[A-Z_]+(?=[\s,.(]|$)[,.]?\s*/, ''),
    );
    for (const name of match[1]!.split(', ')) secrets.push([name, `Secret: environment only. ${note}`.trim()]);
  }
  return { rest: tidy(kept.join(' ')), secrets };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A secret's note goes on to the next line when its sentence is unfinished: a trailing comma, or a lowercase word, or a next line in lowercase. */
function continues(line: string, next: string): boolean {
  if (/[.)]$/.test(line)) return false;
  return /[,;]$|[a-z]$/.test(line) || /^[a-z(]/.test(next);
}

/** One line of prose: no `Env:` note (the table has a column for it). */
function tidy(comment: string): string | null {
  const text = comment
    .replace(/\s+/g, ' ')
    .replace(/\s*Env: SERVICE_[A-Z_<>]+(?: \([^)]*\))?(?:, e\.g\. \S+)?\.?/g, '')
    .trim();
  return text.length > 0 ? text : null;
}

/** A list item as YAML flow style: `{ title: …, message: … }` for objects. */
function flowYaml(item: unknown): string {
  if (item === null || typeof item !== 'object') return String(item);
  return `{ ${Object.entries(item)
    .map(([name, value]) => `${name}: ${String(value)}`)
    .join(', ')} }`;
}

function formatDefault(key: ConfigKey): string {
  if (key.path === 'auth.jwt_secret') return '**required**';
  const value = key.default;
  if (value === null) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? '`[]`' : code(value.map(flowYaml).join(', '));
  if (typeof value === 'object' && value !== null) return code(flowYaml(value).replace('{  }', '{}'));
  if (typeof value === 'string' && value.length > 40) return code(`${value.slice(0, 37)}…`);
  if (typeof value === 'object' && value !== null) return code(JSON.stringify(value));
  return code(String(value));
}

export function configReferencePage(root = repoRoot()): string {
  const keys = configKeys(root);
  const sections = new Map<string, ConfigKey[]>();
  for (const key of keys) {
    const section = key.path.includes('.') ? key.path.split('.')[0]! : 'data_dir';
    sections.set(section, [...(sections.get(section) ?? []), key]);
  }
  const parts = [
    '---',
    'pageClass: fit-tables',
    '---',
    '',
    generatedBanner('src/config/schema.ts, src/config/env-bindings.ts, the channels’ adapters/<name>/settings.ts and the comments of config.yaml'),
    '# Configuration keys',
    '',
    'Every setting of the hub, generated from the configuration schema. Settings come from, highest',
    'first: `SERVICE_*` environment variables, `config.yaml` (path: `SERVICE_CONFIG_FILE`, default',
    '`./config.yaml`), then the built-in defaults below. Startup refuses an unknown key or an invalid',
    'value with one line naming the key (exit status 78). **Secrets** are read only from the',
    'environment (or a local `.env`); `config.yaml` refuses them.',
    '',
    `${keys.length} keys; ${keys.filter((key) => key.env).length} of them can be set by an environment variable (shown under the key).`,
    '',
  ];
  for (const [section, sectionKeys] of sections) {
    parts.push(`## ${section}`, '');
    parts.push(
      table(
        ['Key', 'Default', 'Meaning'],
        sectionKeys.map((key) => [
          `${code(key.path)}${key.yamlAllowed ? '' : ' (env only)'}${key.env ? `<br>${code(key.env)}` : ''}`,
          formatDefault(key),
          `${cell(key.meaning)} <small>Type: ${cell(key.type)}.</small>`,
        ]),
      ),
      '',
    );
  }
  parts.push(
    '## Other environment variables',
    '',
    table(
      ['Variable', 'Meaning'],
      [...OTHER_KNOWN_ENV].sort().map((name) => [code(name), cell(OTHER_ENV_MEANINGS[name] ?? missing(name))]),
    ),
    '',
  );
  return parts.join('\n');
}

/** Variables read outside the config object (src/config/env-bindings.ts, OTHER_KNOWN_ENV). */
const OTHER_ENV_MEANINGS: Record<string, string> = {
  SERVICE_CONFIG_FILE: 'Path of the configuration file; default `./config.yaml` in the working directory.',
  SERVICE_TEST_DATABASE_URL:
    'Tests and benchmarks only: the PostgreSQL server they create throw-away databases on (default `postgres://postgres@127.0.0.1:5432/test`).',
};

function missing(name: string): never {
  throw new Error(`docs generator: ${name} is read by the hub but has no meaning in docs/generate/config-reference.ts`);
}
