import { useEffect, useState, type FormEvent } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { ApiError, apiRequest, errorMessage } from '../api/client';
import { apiOrigin } from '../api/origin';
import { startSamlLogin } from '../auth/saml-handoff';
import { useAuth } from '../auth/auth-context';
import { ErrorNote, Field } from '../components/ui';

type Mode = 'sign-in' | 'register';

/** Set when this browser just registered the hub's first (admin) account; the sessions page greets once. */
export const WELCOME_ADMIN_KEY = 'switchboard.welcome-admin';

/** Sign in, or create an account (the first account on a new hub becomes its administrator). */
export function SignInPage() {
  const { signIn, register } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const [mode, setMode] = useState<Mode>('sign-in');
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const from = (location.state as { from?: string } | null)?.from ?? '/sessions';
  const saml = useSamlOffered();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setFieldErrors({});
    try {
      if (mode === 'sign-in') await signIn(username, password);
      else if ((await register(username, email, password)).role === 'admin') sessionStorage.setItem(WELCOME_ADMIN_KEY, '1');
      void navigate(from === '/sign-in' ? '/sessions' : from, { replace: true });
    } catch (reason) {
      if (reason instanceof ApiError && reason.status === 422 && Object.keys(reason.fields).length > 0) {
        // Shown at the fields; the banner only points there.
        setFieldErrors(Object.fromEntries(Object.entries(reason.fields).map(([field, issues]) => [field, issues.map((issue) => issue.message).join(' ')])));
        setError('Check the fields marked above.');
      } else {
        setError(errorMessage(reason));
      }
    } finally {
      setBusy(false);
    }
  };

  const switchTo = (next: Mode) => {
    setMode(next);
    setError(null);
    setFieldErrors({});
  };

  return (
    <main className="auth-page">
      <div className="auth-card">
        <div className="brand large">
          <img src="/favicon.svg" alt="" width={36} height={36} />
          <span>Switchboard</span>
        </div>
        <div className="tabs" role="tablist" aria-label="Sign in or register">
          <button type="button" role="tab" aria-selected={mode === 'sign-in'} onClick={() => switchTo('sign-in')}>
            Sign in
          </button>
          <button type="button" role="tab" aria-selected={mode === 'register'} onClick={() => switchTo('register')}>
            Create account
          </button>
        </div>
        <form onSubmit={submit} aria-label={mode === 'sign-in' ? 'Sign in' : 'Register'}>
          {mode === 'register' && (
            <p className="note info">
              On a new hub, the <strong>first account becomes the administrator</strong>: it can manage users, workflows, knowledge and channels.
            </p>
          )}
          <Field label="Username" hint={mode === 'register' ? '3–64 letters, digits, _ or -' : 'Your username or email'} error={fieldErrors.username}>
            {(props) => (
              <input
                {...props}
                name="username"
                autoComplete="username"
                required
                value={username}
                onChange={(event) => setUsername(event.target.value)}
                autoFocus
              />
            )}
          </Field>
          {mode === 'register' && (
            <Field label="Email" error={fieldErrors.email}>
              {(props) => (
                <input {...props} name="email" type="email" autoComplete="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
              )}
            </Field>
          )}
          <Field label="Password" hint={mode === 'register' ? 'At least 8 characters' : undefined} error={fieldErrors.password}>
            {(props) => (
              <input
                {...props}
                name="password"
                type="password"
                autoComplete={mode === 'register' ? 'new-password' : 'current-password'}
                required
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            )}
          </Field>
          <ErrorNote>{error}</ErrorNote>
          <button type="submit" className="btn primary block" disabled={busy}>
            {busy ? 'Please wait…' : mode === 'sign-in' ? 'Sign in' : 'Register'}
          </button>
        </form>
        {saml && (
          <p className="muted small center">
            Your organisation uses single sign-on?{' '}
            <a
              href={`${apiOrigin()}/api/v1/auth/saml/login`}
              onClick={(event) => {
                // With a nonce this tab keeps, so only this tab can take the login that comes back.
                event.preventDefault();
                startSamlLogin();
              }}
            >
              Sign in with SAML
            </a>
          </p>
        )}
      </div>
    </main>
  );
}

/** Whether the hub has SAML on (`GET /auth/methods`): the link is offered only then. */
function useSamlOffered(): boolean {
  const [saml, setSaml] = useState(false);
  useEffect(() => {
    const controller = new AbortController();
    apiRequest<{ saml: boolean }>('GET', '/auth/methods', { anonymous: true, signal: controller.signal }).then(
      (methods) => setSaml(methods.saml),
      () => setSaml(false),
    );
    return () => controller.abort();
  }, []);
  return saml;
}
