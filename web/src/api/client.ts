import { apiOrigin } from './origin';
import { tokenStore, type DeliveredPair } from './token-store';

export type FieldIssues = Record<string, { code: string; message: string }[]>;

/** A refused request, carrying the envelope's error (decisions.md §1) for display where it happened. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** `details.fields` of a 422: field name → issues. */
  get fields(): FieldIssues {
    return (this.details.fields as FieldIssues | undefined) ?? {};
  }
}

/** Refresh this long before the access token expires, so a request never races its expiry. */
const REFRESH_MARGIN_MS = 30_000;
const REFRESH_LOCK = 'switchboard-token-refresh';

interface Envelope<T> {
  data: T | null;
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** Send no credential (sign in, register, refresh). */
  anonymous?: boolean;
  /**
   * The refresh token travels as the hub's HttpOnly cookie (sign in, register, refresh, sign out):
   * asked for with `X-Switchboard-Refresh: cookie`, and the cookie is sent along (also from the dev
   * server, another port of the same site).
   */
  refreshCookie?: boolean;
}

/** The header by which the UI asks for the refresh token as a cookie (src/api/refresh-cookie.ts). */
export const REFRESH_COOKIE_HEADER = { 'x-switchboard-refresh': 'cookie' };

/** Calls the REST API: `/api/v1` + path, JSON in and out, the `data` of the envelope back. */
export async function apiRequest<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const send = async (token: string | null) => {
    const headers: Record<string, string> = { accept: 'application/json', ...(options.refreshCookie ? REFRESH_COOKIE_HEADER : {}) };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    try {
      return await fetch(`${apiOrigin()}/api/v1${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
        ...(options.refreshCookie ? { credentials: 'include' as const } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new ApiError(0, 'NETWORK_ERROR', `Cannot reach the hub at ${apiOrigin()}. Is it running?`);
    }
  };
  const token = options.anonymous ? null : await accessToken();
  let response = await send(token);
  if (response.status === 401 && token) {
    const code = await peekErrorCode(response);
    // An expired token is refreshed once; anything else means this sign-in is over.
    if (code === 'TOKEN_EXPIRED' && (await refreshTokens(token))) response = await send(tokenStore.read()?.access_token ?? null);
    if (response.status === 401) {
      tokenStore.clear();
      throw new ApiError(401, 'UNAUTHORIZED', 'Your sign-in has ended. Sign in again.');
    }
  }
  return readEnvelope<T>(response);
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => apiRequest<T>('GET', path, { signal }),
  post: <T>(path: string, body?: unknown) => apiRequest<T>('POST', path, { body: body ?? {} }),
  put: <T>(path: string, body: unknown) => apiRequest<T>('PUT', path, { body }),
  patch: <T>(path: string, body: unknown) => apiRequest<T>('PATCH', path, { body }),
  delete: <T = void>(path: string) => apiRequest<T>('DELETE', path),
};

/** The current access token, refreshed first when it is about to expire; null when signed out. */
export async function accessToken(): Promise<string | null> {
  const auth = tokenStore.read();
  if (!auth) return null;
  if (auth.expires_at - Date.now() > REFRESH_MARGIN_MS) return auth.access_token;
  return (await refreshTokens(auth.access_token)) ? (tokenStore.read()?.access_token ?? null) : null;
}

let refreshing: Promise<boolean> | null = null;

/**
 * Trades the refresh token (the HttpOnly cookie) for a new pair. Refresh tokens are single use and a reused one revokes the
 * whole family, so one refresh runs at a time across every tab (Web Locks), and a tab that waited
 * uses the pair another tab just got instead of spending the old token again.
 */
export function refreshTokens(staleAccessToken: string): Promise<boolean> {
  refreshing ??= (async () => {
    const run = async () => {
      const current = tokenStore.read();
      if (!current) return false;
      if (current.access_token !== staleAccessToken && current.expires_at - Date.now() > REFRESH_MARGIN_MS) return true;
      try {
        // From the cookie; a sign-in stored by an older version still holds its token: traded once for the cookie.
        const body = current.refresh_token ? { refresh_token: current.refresh_token } : {};
        const pair = await apiRequest<DeliveredPair>('POST', '/auth/refresh', { body, anonymous: true, refreshCookie: true });
        tokenStore.save(pair);
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) tokenStore.clear();
        return false;
      }
    };
    return navigator.locks ? navigator.locks.request(REFRESH_LOCK, run) : run();
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

async function peekErrorCode(response: Response): Promise<string | null> {
  try {
    const body = (await response.clone().json()) as Envelope<unknown>;
    return body.error?.code ?? null;
  } catch {
    return null;
  }
}

async function readEnvelope<T>(response: Response): Promise<T> {
  if (response.status === 204) return undefined as T;
  let body: Envelope<T>;
  try {
    body = (await response.json()) as Envelope<T>;
  } catch {
    throw new ApiError(response.status, 'BAD_RESPONSE', `The hub answered ${response.status} without a JSON body.`);
  }
  if (!response.ok || body.error) {
    const error = body.error ?? { code: 'UNKNOWN', message: `Request failed (${response.status}).` };
    throw new ApiError(response.status, error.code, error.message, error.details ?? {});
  }
  return body.data as T;
}

/**
 * Uploads a multipart form with progress (fetch cannot report upload progress; XMLHttpRequest can).
 * `onProgress` gets 0…1.
 */
export async function uploadForm<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  const token = await accessToken();
  return new Promise<T>((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `${apiOrigin()}/api/v1${path}`);
    if (token) request.setRequestHeader('authorization', `Bearer ${token}`);
    request.setRequestHeader('accept', 'application/json');
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onerror = () => reject(new ApiError(0, 'NETWORK_ERROR', `Cannot reach the hub at ${apiOrigin()}.`));
    request.onload = () => {
      onProgress(1);
      const response = new Response(request.responseText || null, { status: request.status, headers: { 'content-type': 'application/json' } });
      readEnvelope<T>(response).then(resolve, reject);
    };
    request.send(form);
  });
}

/** A message for any thrown thing, for display. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
