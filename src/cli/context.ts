import type { Colors } from 'picocolors/types';
import { CredentialStore } from './credentials';
import { API_KEY_PREFIX, HubClient, normaliseHubUrl, type Credential } from './api-client';
import type { HubOptions } from './commands/hub-options';
import { CliError } from './exit-codes';
import type { LocalTargetOptions } from '../workflows/testing/local-target';
import type { CaseTarget } from '../workflows/testing/target';

/** Everything a command needs from the outside world, read once in index.ts (commands never read process.env). */
export interface CliContext {
  configDir: string;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  /** Colours for stdout: on for a terminal or FORCE_COLOR, off with NO_COLOR (no-op functions). */
  colors: Colors;
  out(line: string): void;
  err(line: string): void;
  /**
   * The offline hub of `workflows test` (src/compose/workflow-test-hub.ts), given by the entry that
   * composes it (src/compose/cli.ts); absent, offline tests refuse to run.
   */
  workflowTests?: { startLocal(options: LocalTargetOptions): Promise<CaseTarget> };
  /** The environment the CLI was started with (for the model variables of `workflows test --model record`). */
  env?: Record<string, string | undefined>;
}

/** The client for `--url`, authenticated by `--api-key` / SWITCHBOARD_API_KEY or else the stored login. */
export function connect(context: CliContext, options: HubOptions): HubClient {
  const hubUrl = normaliseHubUrl(options.url);
  let credential: Credential;
  if (options.apiKey) {
    if (!options.apiKey.startsWith(API_KEY_PREFIX))
      throw new CliError(`SWITCHBOARD_API_KEY / --api-key is not an API key (API keys start with "${API_KEY_PREFIX}").`);
    credential = { kind: 'api-key', key: options.apiKey };
  } else credential = { kind: 'login', store: new CredentialStore(context.configDir) };
  return new HubClient(hubUrl, credential);
}
