import type { ChannelDescriptor, EnvKind } from '../core/channel';

export type { EnvKind } from '../core/channel';

/**
 * Which `SERVICE_*` environment variable sets which config key.
 *
 * Secrets are bound here with `secret: true`: they may only come from the environment (config.yaml
 * refuses them) and their values never appear in messages or logs. Each channel binds the keys of
 * its own `channels.<name>` section (its adapter folder's settings); `envBindingsFor` adds them.
 */

export interface EnvBinding {
  env: string;
  path: readonly string[];
  kind: EnvKind;
  secret?: boolean;
}

export const ENV_BINDINGS: readonly EnvBinding[] = [
  { env: 'SERVICE_HOST', path: ['server', 'host'], kind: 'string' },
  { env: 'SERVICE_PORT', path: ['server', 'port'], kind: 'int' },
  { env: 'SERVICE_PUBLIC_URL', path: ['server', 'public_url'], kind: 'nullable-string' },
  { env: 'SERVICE_DATA_DIR', path: ['data_dir'], kind: 'string' },
  { env: 'SERVICE_DATABASE_URL', path: ['database', 'url'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_REDIS_URL', path: ['redis', 'url'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_REDIS_PREFIX', path: ['redis', 'prefix'], kind: 'string' },
  { env: 'SERVICE_LOG_LEVEL', path: ['log', 'level'], kind: 'string' },
  { env: 'SERVICE_LOG_FORMAT', path: ['log', 'format'], kind: 'string' },
  { env: 'SERVICE_JWT_SECRET', path: ['auth', 'jwt_secret'], kind: 'string', secret: true },
  { env: 'SERVICE_SAML_ENABLED', path: ['auth', 'saml', 'enabled'], kind: 'bool' },
  { env: 'SERVICE_SAML_ENTRY_POINT', path: ['auth', 'saml', 'entry_point'], kind: 'nullable-string' },
  { env: 'SERVICE_SAML_IDP_CERT', path: ['auth', 'saml', 'idp_cert'], kind: 'nullable-string' },
  { env: 'SERVICE_SAML_IDP_CERT_FILE', path: ['auth', 'saml', 'idp_cert_file'], kind: 'nullable-string' },
  { env: 'SERVICE_SAML_PRIVATE_KEY', path: ['auth', 'saml', 'private_key'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_SAML_PRIVATE_KEY_FILE', path: ['auth', 'saml', 'private_key_file'], kind: 'nullable-string' },
  { env: 'SERVICE_SAML_SP_CERT', path: ['auth', 'saml', 'sp_cert'], kind: 'nullable-string' },
  { env: 'SERVICE_SAML_SP_CERT_FILE', path: ['auth', 'saml', 'sp_cert_file'], kind: 'nullable-string' },
  { env: 'SERVICE_ALLOWED_ORIGINS', path: ['api', 'allowed_origins'], kind: 'list' },
  { env: 'SERVICE_TRUSTED_PROXY_CIDRS', path: ['api', 'trusted_proxy_cidrs'], kind: 'list' },
  // Not a secret by the spec (it may be set in YAML), but a URL may carry a password: never echoed.
  { env: 'SERVICE_SHARED_STORE_URL', path: ['api', 'shared_store_url'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_LLM_PROVIDER', path: ['llm', 'provider'], kind: 'string' },
  { env: 'SERVICE_LLM_BASE_URL', path: ['llm', 'base_url'], kind: 'nullable-string' },
  { env: 'SERVICE_LLM_API_KEY', path: ['llm', 'api_key'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_LLM_MODEL', path: ['llm', 'model'], kind: 'string' },
  { env: 'SERVICE_LLM_CONTEXT_WINDOW', path: ['llm', 'context_window'], kind: 'int' },
  { env: 'SERVICE_WEB_SEARCH_API_KEY', path: ['tools', 'web_search', 'api_key'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_EMBEDDED_WORKER', path: ['worker', 'embedded'], kind: 'bool' },
  { env: 'SERVICE_METRICS_ENABLED', path: ['metrics', 'enabled'], kind: 'bool' },
  { env: 'SERVICE_METRICS_PORT', path: ['metrics', 'port'], kind: 'int' },
  { env: 'SERVICE_METRICS_HOST', path: ['metrics', 'host'], kind: 'string' },
  { env: 'SERVICE_METRICS_TOKEN', path: ['metrics', 'token'], kind: 'nullable-string', secret: true },
  { env: 'SERVICE_TRACES_OTLP_URL', path: ['traces', 'otlp_url'], kind: 'nullable-string' },
];

/** `SERVICE_RATE_LIMIT_<ROUTE_KEY>` sets `api.rate_limits.<route_key>` (spec, Limits rule 3). */
export const RATE_LIMIT_ENV_PREFIX = 'SERVICE_RATE_LIMIT_';

/**
 * Variables read outside the config object: the config file's own path, and the test suite's
 * PostgreSQL URL. Listed so they are not reported as unknown.
 */
export const OTHER_KNOWN_ENV = new Set(['SERVICE_CONFIG_FILE', 'SERVICE_TEST_DATABASE_URL']);

/** The channels whose `channels.<name>` sections a configuration has: the registry's (adapters/index.ts). */
export type ChannelSections = readonly Pick<ChannelDescriptor, 'name' | 'config'>[];

/** The hub's own bindings and those of each channel's section. */
export function envBindingsFor(channels: ChannelSections): readonly EnvBinding[] {
  const channelBindings = channels.flatMap((channel) =>
    (channel.config?.env ?? []).map((binding) => ({
      env: binding.env,
      path: ['channels', channel.name, binding.key],
      kind: binding.kind,
      secret: binding.secret,
    })),
  );
  return [...ENV_BINDINGS, ...channelBindings];
}

/** Config keys whose values are secrets: refused in YAML (except the shared store URL) and never echoed. */
export function isSecretPath(path: string, bindings: readonly EnvBinding[] = ENV_BINDINGS): boolean {
  return bindings.some((binding) => binding.secret === true && binding.path.join('.') === path);
}

/** Secret keys that config.yaml may still set, because the spec says so. */
export const YAML_ALLOWED_SECRET_PATHS = new Set(['api.shared_store_url']);
