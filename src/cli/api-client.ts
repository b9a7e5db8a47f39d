import { CliError, EXIT } from './exit-codes';
import type { CredentialStore } from './credentials';

export const DEFAULTS = {
  /** The hub `--url` and `SWITCHBOARD_URL` fall back to: what `npm start` serves. */
  hubUrl: 'http://localhost:8000',
  /** How long one request may take before the CLI gives up (sync of many workflows included). */
  requestTimeoutMs: 60_000,
  /** Page size of list requests (the API's maximum). */
  pageSize: 100,
};

/** API keys start with this (decisions.md §2); anything else in SWITCHBOARD_API_KEY is a mistake. */
export const API_KEY_PREFIX = 'svc_live_';

/** How the client proves who it is: an API key (scripts) or the stored login of `switchboard login`. */
export type Credential = { kind: 'api-key'; key: string } | { kind: 'login'; store: CredentialStore };

/** What `POST /auth/login` answers (the part the CLI keeps). */
type LoginAnswer = { access_token: string; refresh_token: string; user: { username: string; role: string } };

interface Envelope<T> {
  data: T | null;
  error: { code: string; message: string; details?: { fields?: Record<string, { code: string; message: string }[]> } } | null;
}

/** The hub refused a request (4xx other than authentication): exit 1, with its code and message. */
export class HubRefusal extends CliError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`The hub refused the request (${status} ${code}): ${message}`, EXIT.REFUSED);
  }
}

/** `http://host:8000/`, `http://host:8000/api/v1` → `http://host:8000` (the key of stored logins). */
export function normaliseHubUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`Not a URL: "${raw}" (expected something like ${DEFAULTS.hubUrl}).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`Not an http(s) URL: "${raw}".`);
  const pathname = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${url.origin}${pathname}`;
}

/** A small JSON client for the hub's REST API: envelopes unwrapped, errors turned into exit codes. */
export class HubClient {
  constructor(
    readonly hubUrl: string,
    private readonly credential: Credential | null,
    private readonly timeoutMs = DEFAULTS.requestTimeoutMs,
  ) {}

  /** Logs in with a username and password; the caller stores the pair. Wrong credentials exit 2. */
  async login(username: string, password: string): Promise<LoginAnswer> {
    const { status, body } = await this.send<LoginAnswer>('POST', '/auth/login', { username, password }, null);
    if (status === 401) throw new CliError(`Login to ${this.hubUrl} refused: wrong username or password, or the account is disabled.`);
    return this.unwrap(status, body);
  }

  /** Checks the hub answers (`GET /health`, no credential) before anything is asked of a person. */
  async ping(): Promise<void> {
    try {
      const { status, body } = await this.send<unknown>('GET', '/health', undefined, null);
      this.unwrap(status, body);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      throw new CliError(`${error.message} Is the hub running (npm start)? Point the CLI at it with --url or SWITCHBOARD_URL.`, error.exitCode);
    }
  }

  async get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  async post<T>(path: string, payload: unknown = {}): Promise<T> {
    return this.call<T>('POST', path, payload);
  }

  async delete<T>(path: string): Promise<T> {
    return this.call<T>('DELETE', path);
  }

  /** Like `get`, but a 404 answers null (optional endpoints a newer hub has, e.g. `GET /config`). */
  async getOptional<T>(path: string): Promise<T | null> {
    const { status, body } = await this.authenticated<T>('GET', path);
    if (isNoSuchEndpoint(status, body)) return null;
    return this.unwrap(status, body);
  }

  /** How this client authenticates, for people: never the secret itself. */
  describeCredential(): string {
    if (!this.credential) return 'nothing';
    if (this.credential.kind === 'api-key') return `API key ${this.credential.key.slice(0, API_KEY_PREFIX.length + 3)}…`;
    return `the stored login in ${this.credential.store.file}`;
  }

  /** `login` (a stored token pair) or `api_key`, for `whoami --json`. */
  get credentialKind(): 'login' | 'api_key' | null {
    return this.credential === null ? null : this.credential.kind === 'login' ? 'login' : 'api_key';
  }

  /** Whether a rejected socket credential can be renewed with `refreshToken()` (stored logins only). */
  get canRefresh(): boolean {
    return this.credential?.kind === 'login';
  }

  /** `/ws/v1/...` on this hub: ws:// for http, wss:// for https. */
  socketUrl(path: string): string {
    return `${this.hubUrl.replace(/^http/, 'ws')}${path}`;
  }

  /** The bearer credential for a WebSocket handshake (an access token or the API key). */
  async socketToken(): Promise<string> {
    return this.token();
  }

  /** Renews the stored login's access token (a socket closed with 4001 "token expired"). */
  async refreshToken(): Promise<string> {
    if (!this.canRefresh) throw new CliError('An API key cannot be refreshed.');
    return this.refresh();
  }

  private async call<T>(method: string, path: string, payload?: unknown): Promise<T> {
    const { status, body } = await this.authenticated<T>(method, path, payload);
    return this.unwrap(status, body);
  }

  /** Sends with the credential; a 401 TOKEN_EXPIRED on a stored login refreshes once and retries. */
  private async authenticated<T>(method: string, path: string, payload?: unknown): Promise<{ status: number; body: Envelope<T> | null }> {
    const token = await this.token();
    let answer = await this.send<T>(method, path, payload, token);
    if (answer.status === 401 && answer.body?.error?.code === 'TOKEN_EXPIRED' && this.credential?.kind === 'login') {
      answer = await this.send<T>(method, path, payload, await this.refresh());
    }
    return answer;
  }

  private async token(): Promise<string> {
    if (!this.credential) throw new CliError(`Not logged in to ${this.hubUrl}: run \`switchboard login --url ${this.hubUrl}\` or set SWITCHBOARD_API_KEY.`);
    if (this.credential.kind === 'api-key') return this.credential.key;
    const stored = await this.credential.store.get(this.hubUrl);
    if (!stored) throw new CliError(`Not logged in to ${this.hubUrl}: run \`switchboard login --url ${this.hubUrl}\` or set SWITCHBOARD_API_KEY.`);
    return stored.access_token;
  }

  /** Trades the stored refresh token for a new pair (the old one is spent) and stores it. */
  private async refresh(): Promise<string> {
    const store = (this.credential as { kind: 'login'; store: CredentialStore }).store;
    const stored = await store.get(this.hubUrl);
    if (!stored) throw new CliError(`Not logged in to ${this.hubUrl}: run \`switchboard login\`.`);
    const { status, body } = await this.send<{ access_token: string; refresh_token: string }>(
      'POST',
      '/auth/refresh',
      { refresh_token: stored.refresh_token },
      null,
    );
    if (status === 401) {
      await store.remove(this.hubUrl);
      throw new CliError(`Your login to ${this.hubUrl} has expired: run \`switchboard login --url ${this.hubUrl}\` again.`);
    }
    const pair = this.unwrap<{ access_token: string; refresh_token: string }>(status, body);
    await store.save(this.hubUrl, { username: stored.username, access_token: pair.access_token, refresh_token: pair.refresh_token });
    return pair.access_token;
  }

  private unwrap<T>(status: number, body: Envelope<T> | null): T {
    if (status === 204) return undefined as T;
    if (status >= 200 && status < 300 && body && body.error === null) return body.data as T;
    const code = body?.error?.code ?? 'UNKNOWN';
    const message = body?.error?.message ?? 'no message';
    if (status === 401) {
      const what = this.credential?.kind === 'api-key' ? 'SWITCHBOARD_API_KEY' : `your login (run \`switchboard login --url ${this.hubUrl}\`)`;
      throw new CliError(`The hub at ${this.hubUrl} did not accept ${what}: ${code}.`);
    }
    if (status === 403) throw new CliError(`Not allowed (${code}): ${message} It may need an admin account or an admin's API key.`);
    // An unknown endpoint means --url points somewhere else; other 404s name a missing resource.
    if (isNoSuchEndpoint(status, body)) throw new CliError(`${this.hubUrl} has no Switchboard API (404 ${code}): check --url or SWITCHBOARD_URL.`);
    if (status >= 400 && status < 500 && status !== 429) {
      const fields = Object.entries(body?.error?.details?.fields ?? {}).flatMap(([field, issues]) => issues.map((issue) => `${field}: ${issue.message}`));
      throw new HubRefusal(status, code, [message, ...fields].join('; '));
    }
    throw new CliError(`The hub at ${this.hubUrl} failed (${status} ${code}): ${message}`);
  }

  private async send<T>(method: string, path: string, payload: unknown, token: string | null): Promise<{ status: number; body: Envelope<T> | null }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await fetch(`${this.hubUrl}/api/v1${path}`, {
        method,
        headers,
        body: payload === undefined ? undefined : JSON.stringify(payload),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new CliError(`Cannot reach the hub at ${this.hubUrl}: ${reason(error)}.`);
    }
    const text = await response.text();
    if (text === '') return { status: response.status, body: null };
    try {
      const body = JSON.parse(text) as Envelope<T>;
      if (typeof body === 'object' && body !== null && 'data' in body && 'error' in body) return { status: response.status, body };
    } catch {
      // falls through: not JSON
    }
    throw new CliError(`${this.hubUrl} does not answer like a Switchboard hub (HTTP ${response.status} to ${method} /api/v1${path}).`);
  }
}

/** The hub's answer to a path it has no endpoint for (not a missing resource). */
function isNoSuchEndpoint(status: number, body: Envelope<unknown> | null): boolean {
  return status === 404 && (body?.error?.code ?? 'NOT_FOUND') === 'NOT_FOUND' && (body?.error?.message ?? '').startsWith('No such endpoint');
}

/** The useful part of a fetch failure: `ECONNREFUSED`, `ENOTFOUND`, a timeout. */
function reason(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'no answer in time';
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
