import { createHmac, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/**
 * Hand-made JWTs: every part (header, claims, signature) is chosen by the test, so a case can break
 * exactly one thing. Nothing here trusts a JWT library's idea of what is allowed to be signed.
 */
const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export type Signer = (signingInput: string) => string;

export function compactJwt(header: Record<string, unknown>, claims: Record<string, unknown>, signer: Signer | null): string {
  const input = `${segment(header)}.${segment(claims)}`;
  return `${input}.${signer ? signer(input) : ''}`;
}

export const hmacSigner =
  (key: string | Buffer, digest: 'sha256' | 'sha384' | 'sha512' = 'sha256'): Signer =>
  (input) =>
    createHmac(digest, key).update(input).digest('base64url');

export const rsaSigner =
  (privateKey: KeyObject): Signer =>
  (input) =>
    sign('sha256', Buffer.from(input), privateKey).toString('base64url');

export const ecdsaSigner =
  (privateKey: KeyObject): Signer =>
  (input) =>
    sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');

/** An attacker's own key pairs (the hub has never seen them). */
export const attackerRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
export const attackerEc = generateKeyPairSync('ec', { namedCurve: 'P-256' });

export const nowS = () => Math.floor(Date.now() / 1000);

/** The claims the hub puts in an access token (src/auth/access-tokens.ts), for `sub`; overrides may delete with `undefined`. */
export function accessClaims(sub: unknown, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const all: Record<string, unknown> = {
    role: 'admin',
    typ: 'access',
    iat: nowS(),
    exp: nowS() + 600,
    aud: 'switchboard-api',
    iss: 'switchboard',
    sub,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
}

export const HS256 = { alg: 'HS256', typ: 'JWT' } as const;

/** A string shaped like an API key (`svc_live_` + 43 base64url characters) that the hub never issued. */
export function unissuedApiKey(): string {
  return `svc_live_${randomBytes(32).toString('base64url')}`;
}

/** `value` with its last character replaced by another of the same alphabet. */
export function lastCharChanged(value: string): string {
  const last = value.at(-1)!;
  return value.slice(0, -1) + (last === 'A' ? 'B' : 'A');
}
