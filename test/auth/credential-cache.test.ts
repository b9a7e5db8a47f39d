import { CredentialCache, type CachedApiKey } from '../../src/auth/credential-cache';

/** The credential cache keeps what it read, except a read that a revocation overtook. */
const key = (id: string): CachedApiKey => ({ id, user_id: 'user-1', expires_at: null, lastUsedWritten: 0 });

describe('credential cache', () => {
  it('serves a cached key without reading again, and reads again once the key is forgotten', async () => {
    const cache = new CredentialCache();
    let reads = 0;
    const load = async () => {
      reads += 1;
      return key('key-1');
    };
    await cache.apiKey('hash-1', load);
    await cache.apiKey('hash-1', load);
    expect(reads).toBe(1);
    cache.forget('user-1', 'key-1');
    await cache.apiKey('hash-1', load);
    expect(reads).toBe(2);
  });

  it('does not keep a read that was in flight when the key was revoked: the next check reads again', async () => {
    const cache = new CredentialCache();
    let release!: (value: CachedApiKey | null) => void;
    const slowRead = new Promise<CachedApiKey | null>((resolve) => (release = resolve));
    const inFlight = cache.apiKey('hash-1', () => slowRead);
    // The revocation lands while the read (which saw the key before it was revoked) is still out.
    cache.forget('user-1', 'key-1');
    release(key('key-1'));
    expect(await inFlight).toEqual(key('key-1'));
    const afterRevocation = await cache.apiKey('hash-1', async () => null);
    expect(afterRevocation).toBeNull();
  });
});
