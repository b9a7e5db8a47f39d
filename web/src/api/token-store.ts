import type { TokenPair, User } from './types';

/**
 * What the browser keeps between visits: the short-lived access token and who it belongs to. The
 * refresh token is not here: the hub keeps it in an HttpOnly cookie scripts cannot read (issue 26).
 */
export interface StoredAuth {
  access_token: string;
  /** Epoch milliseconds when the access token expires. */
  expires_at: number;
  user: User;
  /** Only in a sign-in stored by an older version: traded once for the cookie, then dropped. */
  refresh_token?: string;
}

/** A token pair as the hub answers a browser that asked for the refresh cookie: `refresh_token` null. */
export type DeliveredPair = Omit<TokenPair, 'refresh_token'> & { refresh_token: string | null };

const STORAGE_KEY = 'switchboard.auth';
type Listener = (auth: StoredAuth | null) => void;
const listeners = new Set<Listener>();

/**
 * The signed-in state, in localStorage so a reload stays signed in and every tab shares one sign-in
 * (a refresh in one tab is seen by the others through the `storage` event).
 */
export const tokenStore = {
  read(): StoredAuth | null {
    try {
      const raw = localStorage.getItem(STORAGE_KEY);
      return raw ? (JSON.parse(raw) as StoredAuth) : null;
    } catch {
      return null;
    }
  },
  save(pair: DeliveredPair): StoredAuth {
    const auth: StoredAuth = { access_token: pair.access_token, expires_at: Date.now() + pair.expires_in * 1000, user: pair.user };
    localStorage.setItem(STORAGE_KEY, JSON.stringify(auth));
    notify(auth);
    return auth;
  },
  updateUser(user: User): void {
    const current = tokenStore.read();
    if (!current) return;
    const auth = { ...current, user };
    localStorage.setItem(STORAGE_KEY, JSON.stringify(auth));
    notify(auth);
  },
  clear(): void {
    localStorage.removeItem(STORAGE_KEY);
    notify(null);
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

function notify(auth: StoredAuth | null): void {
  for (const listener of listeners) listener(auth);
}

if (typeof window !== 'undefined') {
  window.addEventListener('storage', (event) => {
    if (event.key === STORAGE_KEY) notify(tokenStore.read());
  });
}
