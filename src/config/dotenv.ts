import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/** The optional local env file `npm start` reads (and creates with a development JWT secret). */
export const DOTENV_FILE = '.env';

/**
 * The process environment over the variables of a `.env` file, if one exists: a variable set (to a
 * non-empty value) in the real environment wins.
 */
export function environmentWithDotEnv(file: string, environment: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  if (!existsSync(file)) return { ...environment };
  const merged: Record<string, string | undefined> = { ...parseEnv(readFileSync(file, 'utf8')) };
  // An empty variable (`export SERVICE_X=`) does not mask the file's value.
  for (const [name, value] of Object.entries(environment)) if (value !== '' || !(name in merged)) merged[name] = value;
  return merged;
}
