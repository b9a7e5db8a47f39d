import type { Command } from 'commander';
import { HubClient, normaliseHubUrl } from '../api-client';
import type { CliContext } from '../context';
import { CredentialStore } from '../credentials';
import { CliError } from '../exit-codes';
import { promptHidden, promptLine, readFirstLine } from '../prompt';
import { urlOption } from './hub-options';

interface LoginOptions {
  url: string;
  username?: string;
  password?: string;
}

/**
 * `switchboard login`: trades a username and password for a token pair and stores it for this hub.
 * Without `--password` the password is asked without echo on a terminal, or read from the first
 * line of stdin when piped (so it need not appear in the process list).
 */
export function registerLogin(program: Command, context: CliContext): void {
  program
    .command('login')
    .description('log in to a hub and store the token pair (never printed) for the other commands')
    .addOption(urlOption())
    .option('--username <username>', 'username or email (asked when omitted on a terminal)')
    .option('--password <password>', 'password (asked without echo, or read from stdin, when omitted)')
    .action(async (options: LoginOptions) => {
      const hubUrl = normaliseHubUrl(options.url);
      const client = new HubClient(hubUrl, null);
      // A hub that does not answer is said before anyone types a password for it.
      await client.ping();
      const interactive = context.stdin.isTTY === true;
      const username = options.username ?? (interactive ? await promptLine('Username: ', context.stdin) : null);
      if (!username) throw new CliError('A username is needed: pass --username <username>.');
      let password = options.password ?? null;
      if (password === null) password = interactive ? await promptHidden('Password: ', context.stdin) : await readFirstLine(context.stdin);
      if (!password) throw new CliError('A password is needed: pass --password, type it when asked, or pipe it on stdin.');
      const pair = await client.login(username, password);
      const store = new CredentialStore(context.configDir);
      await store.save(hubUrl, { username: pair.user.username, access_token: pair.access_token, refresh_token: pair.refresh_token });
      context.out(`Logged in to ${hubUrl} as ${pair.user.username} (${pair.user.role}). Credentials saved in ${store.file}.`);
    });
}
