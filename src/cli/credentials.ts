import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CliError } from './exit-codes';

/** What `switchboard login` keeps per hub. */
export interface StoredLogin {
  username: string;
  access_token: string;
  refresh_token: string;
  saved_at: string;
}

interface CredentialsFile {
  version: 1;
  /** Keyed by the hub's normalised URL, so one machine can be logged in to several hubs. */
  hubs: Record<string, StoredLogin>;
}

export const CREDENTIALS_FILE_NAME = 'credentials.json';

/**
 * The token pairs of `switchboard login`, in `<configDir>/credentials.json`, readable by the owner
 * only (0600, directory 0700): a refresh token is as good as a password for 30 days.
 */
export class CredentialStore {
  readonly file: string;

  constructor(readonly configDir: string) {
    this.file = path.join(configDir, CREDENTIALS_FILE_NAME);
  }

  async get(hubUrl: string): Promise<StoredLogin | null> {
    return (await this.read()).hubs[hubUrl] ?? null;
  }

  async save(hubUrl: string, login: Omit<StoredLogin, 'saved_at'>): Promise<void> {
    const contents = await this.read();
    contents.hubs[hubUrl] = { ...login, saved_at: new Date().toISOString() };
    await this.write(contents);
  }

  async remove(hubUrl: string): Promise<void> {
    const contents = await this.read();
    if (!(hubUrl in contents.hubs)) return;
    delete contents.hubs[hubUrl];
    await this.write(contents);
  }

  private async read(): Promise<CredentialsFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, hubs: {} };
      throw new CliError(`Cannot read ${this.file}: ${(error as Error).message}`);
    }
    try {
      const parsed = JSON.parse(text) as Partial<CredentialsFile>;
      if (!parsed || typeof parsed.hubs !== 'object' || parsed.hubs === null) throw new Error('no "hubs" object');
      return { version: 1, hubs: parsed.hubs };
    } catch (error) {
      throw new CliError(`${this.file} is damaged (${(error as Error).message}): delete it and log in again.`);
    }
  }

  private async write(contents: CredentialsFile): Promise<void> {
    await mkdir(this.configDir, { recursive: true, mode: 0o700 });
    // Written beside the target and renamed, so a crash never leaves half a file; created 0600 so
    // the tokens are never readable by others, not even for a moment.
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600);
    await rename(temporary, this.file);
  }
}
