import type { Migration } from '../migrator';

/** Every migration, in order. Append only; a released migration is never edited. */
export const MIGRATIONS: readonly Migration[] = [];
