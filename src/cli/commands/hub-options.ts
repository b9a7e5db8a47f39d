import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULTS } from '../api-client';

/** What every command that talks to a hub accepts (`--url`, `--api-key`). */
export interface HubOptions {
  url: string;
  apiKey?: string;
}

/** `--url <hub>` on every command, from SWITCHBOARD_URL when not given. */
export function urlOption(): Option {
  return new Option('--url <hub>', 'the hub to talk to').env('SWITCHBOARD_URL').default(DEFAULTS.hubUrl);
}

/**
 * `--api-key <key>`, from SWITCHBOARD_API_KEY when not given; it wins over a stored login. The
 * variable is the better way: an option shows in the process list.
 */
export function apiKeyOption(): Option {
  return new Option('--api-key <key>', 'authenticate with this API key (svc_live_…) instead of the stored login').env('SWITCHBOARD_API_KEY');
}

/** `--json`: print the API's data as JSON (one document; `logs`: one object per line) for scripts. */
export function jsonOption(description = 'print JSON instead of text, for scripts'): Option {
  return new Option('--json', description);
}

/** Adds `--url` and `--api-key` to a command that talks to a hub. */
export function withHubOptions(command: Command): Command {
  return command.addOption(urlOption()).addOption(apiKeyOption());
}

/** Commander's parser for options such as `--limit <n>`: a whole number of at least 1. */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number of at least 1.');
  return number;
}
