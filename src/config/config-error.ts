/** A configuration problem found at startup. `message` is one line, names the key, never a secret. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
