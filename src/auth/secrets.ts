import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, base64url: the opaque part of refresh tokens and API keys. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * sha256 hex of a high-entropy secret. Enough for random 256-bit values (no dictionary to attack),
 * and a deterministic hash lets the database find the row by an indexed lookup.
 */
export function sha256(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}
