import { hash, verify, type Algorithm } from '@node-rs/argon2';

/** argon2id (the library's `Algorithm.Argon2id`; a const enum, which isolated modules cannot import). */
const ARGON2ID = 2 as Algorithm;

/** OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. */
export const PASSWORD_HASH_DEFAULTS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID, ...PASSWORD_HASH_DEFAULTS });
}

/**
 * Verifies a password. With `hashed` null (unknown user, or a SAML-only user) it still verifies
 * against a dummy hash, so the answer takes as long as for a real user and timing reveals nothing.
 */
export async function verifyPassword(hashed: string | null, password: string): Promise<boolean> {
  const target = hashed ?? (await dummyHash());
  let matches = false;
  try {
    matches = await verify(target, password);
  } catch {
    matches = false; // a corrupt stored hash is a failed login, not a 500
  }
  return hashed !== null && matches;
}

let dummy: Promise<string> | undefined;
function dummyHash(): Promise<string> {
  dummy ??= hashPassword('dummy password for unknown users');
  return dummy;
}
