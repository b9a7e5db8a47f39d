import type { TokenPair, User } from './types';

/** What the browser keeps between visits: the token pair and who it belongs to. */
export interface StoredAuth {
  access_token: string;
  refresh_token: string;
  /** Epoch milliseconds when the access token expires. */
  expires_at: number;
  user: User;
}

const STORAGE_KEY = 'switchboard.auth';
type Listener = (auth: StoredAuth | null) => void;
const listeners = new Set<Listener>();

/**
 * The signed-in state, in localStorage so a reload stays signed in and every tab shares one token
 * family (a refresh in one tab is seen by the others through the `storage` event).
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
  save(pair: TokenPair): StoredAuth {
    const auth: StoredAuth = {
      access_token: pair.access_token,
      refresh_token: pair.refresh_token,
      expires_at: Date.now() + pair.expires_in * 1000,
      user: pair.user,
    };
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
