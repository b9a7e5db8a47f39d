import { apiOrigin } from '../api/origin';

/**
 * A SAML login's hand-off, bound to this browser (issue 26, login CSRF). Before leaving for the IdP
 * the UI keeps a random nonce in sessionStorage and sends it as the RelayState; the hub comes back
 * with `#saml_code=…&state=…` (a one-time code, never tokens). A fragment whose state is not the
 * nonce this tab kept — a link someone else made, carrying their own code — is dropped unused.
 */
const STATE_KEY = 'switchboard.saml_state';

/** Goes to the hub's SAML login with a fresh nonce as the RelayState. */
export function startSamlLogin(): void {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  const nonce = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  sessionStorage.setItem(STATE_KEY, nonce);
  location.assign(`${apiOrigin()}/api/v1/auth/saml/login?relay_state=${encodeURIComponent(nonce)}`);
}

export interface Handoff {
  code: string;
  state: string;
}

/**
 * The hand-off in the address, when this tab started it; the fragment is removed from the address
 * bar at once either way (and so are the token fragments older hubs sent, which are never taken).
 */
export function takeSamlHandoff(): Handoff | null {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const code = fragment.get('saml_code');
  const state = fragment.get('state');
  const carriesCredentials = code !== null || fragment.has('access_token') || fragment.has('refresh_token');
  if (carriesCredentials) history.replaceState(null, '', location.pathname + location.search);
  if (code === null || state === null) return null;
  const expected = sessionStorage.getItem(STATE_KEY);
  sessionStorage.removeItem(STATE_KEY);
  if (!expected || expected !== state) return null;
  return { code, state };
}
