import { Option } from 'commander';
import { DEFAULTS } from '../api-client';

/** `--url <hub>` on every command, from SWITCHBOARD_URL when not given. */
export function urlOption(): Option {
  return new Option('--url <hub>', 'the hub to talk to').env('SWITCHBOARD_URL').default(DEFAULTS.hubUrl);
}
