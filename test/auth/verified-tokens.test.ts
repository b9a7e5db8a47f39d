import { VerifiedTokens } from '../../src/auth/verified-tokens';

/** The verified-token cache of the JWT check (src/auth/verified-tokens.ts): what it keeps and for how long. */
describe('VerifiedTokens', () => {
  const now = () => Math.floor(Date.now() / 1000);

  it('gives back the claims of a remembered token until it expires', () => {
    const tokens = new VerifiedTokens();
    const claims = { sub: 'u1', typ: 'access', iat: now(), exp: now() + 60 };
    tokens.remember('a.b.c', claims);
    expect(tokens.get('a.b.c')).toBe(claims);
    expect(tokens.get('a.b.d')).toBeUndefined();
  });

  it('drops a token at its exp, so the JWT library decides (TOKEN_EXPIRED) again', () => {
    const tokens = new VerifiedTokens();
    tokens.remember('old', { sub: 'u1', typ: 'access', iat: now() - 120, exp: now() });
    expect(tokens.get('old')).toBeUndefined();
  });

  it('keeps no token with nbf or without exp, and none when its bound is 0', () => {
    const tokens = new VerifiedTokens();
    tokens.remember('nbf', { sub: 'u1', exp: now() + 60, nbf: now() });
    tokens.remember('no-exp', { sub: 'u1' });
    const none = new VerifiedTokens({ maxEntries: 0 });
    none.remember('t', { sub: 'u1', exp: now() + 60 });
    expect([tokens.get('nbf'), tokens.get('no-exp'), none.get('t')]).toEqual([undefined, undefined, undefined]);
  });

  it('lets the oldest token go when full', () => {
    const tokens = new VerifiedTokens({ maxEntries: 2 });
    for (const token of ['t1', 't2', 't3']) tokens.remember(token, { sub: token, exp: now() + 60 });
    expect([tokens.get('t1'), tokens.get('t2')?.sub, tokens.get('t3')?.sub]).toEqual([undefined, 't2', 't3']);
  });
});
