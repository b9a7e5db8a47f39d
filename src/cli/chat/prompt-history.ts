import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Lines kept in the chat prompt's history (up arrow), across runs. */
export const PROMPT_HISTORY_SIZE = 500;

/**
 * The chat prompt's history in `<configDir>/chat-history`, newest first as readline keeps it,
 * readable by the owner only (0600): messages may be as private as the chat itself.
 */
export class PromptHistory {
  readonly file: string;

  constructor(private readonly configDir: string) {
    this.file = path.join(configDir, 'chat-history');
  }

  async load(): Promise<string[]> {
    try {
      return (await readFile(this.file, 'utf8'))
        .split('\n')
        .filter((line) => line !== '')
        .slice(0, PROMPT_HISTORY_SIZE);
    } catch {
      return []; // none yet, or unreadable: start without
    }
  }

  async save(lines: readonly string[]): Promise<void> {
    try {
      await mkdir(this.configDir, { recursive: true, mode: 0o700 });
      await writeFile(this.file, `${lines.slice(0, PROMPT_HISTORY_SIZE).join('\n')}\n`, { mode: 0o600 });
      await chmod(this.file, 0o600);
    } catch {
      // A history that cannot be saved is not worth failing the chat over.
    }
  }
}
