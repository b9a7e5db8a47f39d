import type { Migration } from '../migrator';
import { sessionsAndMessages } from './0002-sessions-and-messages';

/** Every migration, in order. Append only; a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [sessionsAndMessages];
