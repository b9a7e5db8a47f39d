import { CredentialStore } from './credentials';
import { API_KEY_PREFIX, HubClient, normaliseHubUrl, type Credential } from './api-client';
import { CliError } from './exit-codes';

/** Everything a command needs from the outside world, read once in index.ts (commands never read process.env). */
export interface CliContext {
  configDir: string;
  /** SWITCHBOARD_API_KEY, when set: it wins over a stored login. */
  apiKey: string | null;
  stdin: NodeJS.ReadStream;
  out(line: string): void;
  err(line: string): void;
}

/** The client for `--url`, authenticated by SWITCHBOARD_API_KEY or else the stored login. */
export function connect(context: CliContext, rawUrl: string): HubClient {
  const hubUrl = normaliseHubUrl(rawUrl);
  let credential: Credential;
  if (context.apiKey !== null) {
    if (!context.apiKey.startsWith(API_KEY_PREFIX)) throw new CliError(`SWITCHBOARD_API_KEY is not an API key (they start with "${API_KEY_PREFIX}").`);
    credential = { kind: 'api-key', key: context.apiKey };
  } else credential = { kind: 'login', store: new CredentialStore(context.configDir) };
  return new HubClient(hubUrl, credential);
}
