export { loadConfig, ConfigError, DEFAULT_CONFIG_FILE, type LoadedConfig } from './load';
export { configSchema, configSchemaFor, JWT_SECRET_MIN_HEX, type Config, type LogLevel } from './schema';
export { ENV_BINDINGS, envBindingsFor, type ChannelSections } from './env-bindings';
