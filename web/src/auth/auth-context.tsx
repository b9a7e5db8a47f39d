import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, apiRequest } from '../api/client';
import { tokenStore, type DeliveredPair, type StoredAuth } from '../api/token-store';
import type { User } from '../api/types';
import { takeSamlHandoff } from './saml-handoff';

interface AuthContextValue {
  user: User | null;
  /** True until a stored sign-in has been checked with the hub. */
  checking: boolean;
  signIn(username: string, password: string): Promise<User>;
  register(username: string, email: string, password: string): Promise<User>;
  signOut(): Promise<void>;
}

const AuthContext = createContext<AuthContextValue | null>(null);

export function AuthProvider({ children }: { children: ReactNode }) {
  const [auth, setAuth] = useState<StoredAuth | null>(() => tokenStore.read());
  const [checking, setChecking] = useState(true);

  useEffect(() => tokenStore.subscribe(setAuth), []);

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      // A SAML login this tab started (its nonce matches): the one-time code becomes a sign-in. A
      // signed-in user is never replaced without being asked.
      const handoff = takeSamlHandoff();
      const signedIn = tokenStore.read();
      if (
        handoff &&
        (!signedIn || window.confirm(`You are signed in as ${signedIn.user.username}. Sign in with the account of your single sign-on instead?`))
      ) {
        try {
          tokenStore.save(await apiRequest<DeliveredPair>('POST', '/auth/saml/exchange', { body: handoff, anonymous: true, refreshCookie: true }));
        } catch {
          // An expired or used code: the sign-in page stays, the user starts again.
        }
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
    const pair = await apiRequest<DeliveredPair>('POST', '/auth/login', { body: { username, password }, anonymous: true, refreshCookie: true });
    return tokenStore.save(pair).user;
  }, []);

  const register = useCallback(async (username: string, email: string, password: string) => {
    const pair = await apiRequest<DeliveredPair>('POST', '/auth/register', { body: { username, email, password }, anonymous: true, refreshCookie: true });
    return tokenStore.save(pair).user;
  }, []);

  const signOut = useCallback(async () => {
    const current = tokenStore.read();
    tokenStore.clear();
    // Ends this refresh-token family on the hub and clears its cookie; the UI is signed out either way.
    await apiRequest('DELETE', '/auth/refresh', { anonymous: true, refreshCookie: true }).catch(() => undefined);
    if (current?.refresh_token)
      await apiRequest('POST', '/auth/logout', { body: { refresh_token: current.refresh_token }, anonymous: true }).catch(() => undefined);
  }, []);

  const value = useMemo(() => ({ user: auth?.user ?? null, checking, signIn, register, signOut }), [auth, checking, signIn, register, signOut]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthContextValue {
  const value = useContext(AuthContext);
  if (!value) throw new Error('useAuth needs an <AuthProvider> above it');
  return value;
}
