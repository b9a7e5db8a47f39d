import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, apiRequest } from '../api/client';
import { apiOrigin } from '../api/origin';
import { tokenStore, type StoredAuth } from '../api/token-store';
import type { TokenPair, User } from '../api/types';

interface AuthContextValue {
  user: User | null;
  /** True until a stored sign-in has been checked with the hub. */
  checking: boolean;
  signIn(username: string, password: string): Promise<User>;
  register(username: string, email: string, password: string): Promise<User>;
  signOut(): Promise<void>;
}

const AuthContext = createContext<AuthContextValue | null>(null);

/**
 * A SAML login lands on the UI with the token pair in the URL fragment (decisions.md §2): take it,
 * and remove it from the address bar at once so it is never bookmarked or shared.
 */
function pairFromFragment(): Omit<TokenPair, 'user'> | null {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const access = fragment.get('access_token');
  const refresh = fragment.get('refresh_token');
  if (!access || !refresh) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return { access_token: access, refresh_token: refresh, token_type: 'bearer', expires_in: Number(fragment.get('expires_in') ?? 900) };
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [auth, setAuth] = useState<StoredAuth | null>(() => tokenStore.read());
  const [checking, setChecking] = useState(true);

  useEffect(() => tokenStore.subscribe(setAuth), []);

  useEffect(() => {
    let cancelled = false;
    (async () => {
      const fromSaml = pairFromFragment();
      if (fromSaml) {
        const me = await fetchMe(fromSaml.access_token);
        if (me) tokenStore.save({ ...fromSaml, user: me });
      }
      // Re-read who we are: role or active flag may have changed since the last visit.
      if (tokenStore.read()) {
        try {
          tokenStore.updateUser(await api.get<User>('/auth/me'));
        } catch {
          // Signed out by the client on 401; a network error keeps the stored user for now.
        }
      }
      if (!cancelled) setChecking(false);
    })();
    return () => {
      cancelled = true;
    };
  }, []);

  const signIn = useCallback(async (username: string, password: string) => {
    const pair = await apiRequest<TokenPair>('POST', '/auth/login', { body: { username, password }, anonymous: true });
    return tokenStore.save(pair).user;
  }, []);

  const register = useCallback(async (username: string, email: string, password: string) => {
    const pair = await apiRequest<TokenPair>('POST', '/auth/register', { body: { username, email, password }, anonymous: true });
    return tokenStore.save(pair).user;
  }, []);

  const signOut = useCallback(async () => {
    const current = tokenStore.read();
    tokenStore.clear();
    if (current) {
      // Ends this refresh-token family on the hub; the UI is signed out either way.
      await apiRequest('POST', '/auth/logout', { body: { refresh_token: current.refresh_token }, anonymous: true }).catch(() => undefined);
    }
  }, []);

  const value = useMemo(() => ({ user: auth?.user ?? null, checking, signIn, register, signOut }), [auth, checking, signIn, register, signOut]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

async function fetchMe(accessToken: string): Promise<User | null> {
  try {
    const response = await fetch(`${apiOrigin()}/api/v1/auth/me`, { headers: { authorization: `Bearer ${accessToken}` } });
    const body = (await response.json()) as { data: User | null };
    return body.data;
  } catch {
    return null;
  }
}

export function useAuth(): AuthContextValue {
  const value = useContext(AuthContext);
  if (!value) throw new Error('useAuth needs an <AuthProvider> above it');
  return value;
}
