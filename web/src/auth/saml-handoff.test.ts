import { afterEach, describe, expect, it } from 'vitest';
import { takeSamlHandoff } from './saml-handoff';

/** The SAML hand-off is taken only by the tab that started the login (issue 26, login CSRF). */
describe('takeSamlHandoff', () => {
  afterEach(() => {
    sessionStorage.clear();
    history.replaceState(null, '', '/');
  });

  it('takes a code whose state is the nonce this tab kept, once, and clears the address', () => {
    sessionStorage.setItem('switchboard.saml_state', 'n0nce');
    history.replaceState(null, '', '/#saml_code=abc&state=n0nce');
    expect(takeSamlHandoff()).toEqual({ code: 'abc', state: 'n0nce' });
    expect(location.hash).toBe('');
    expect(sessionStorage.getItem('switchboard.saml_state')).toBeNull();
    history.replaceState(null, '', '/#saml_code=abc&state=n0nce');
    expect(takeSamlHandoff()).toBeNull();
  });

  it('drops a link someone else made: no nonce here, or another one', () => {
    history.replaceState(null, '', '/#saml_code=attacker&state=theirs');
    expect(takeSamlHandoff()).toBeNull();
    expect(location.hash).toBe('');
    sessionStorage.setItem('switchboard.saml_state', 'mine');
    history.replaceState(null, '', '/#saml_code=attacker&state=theirs');
    expect(takeSamlHandoff()).toBeNull();
  });

  it('never takes tokens from the address (what older hubs sent), and removes them from it', () => {
    history.replaceState(null, '', '/#access_token=a&refresh_token=r&token_type=bearer&expires_in=900');
    expect(takeSamlHandoff()).toBeNull();
    expect(location.hash).toBe('');
  });
});
