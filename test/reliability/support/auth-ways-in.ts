import { request, type JsonResponse } from '../../helpers/http';
import { openSocket, type OpenOptions } from '../../helpers/ws-client';

/**
 * The ways a bearer credential (access JWT, API key, or something posing as one) gets into a hub, and
 * what each one answered, as one short string per try: `200`, `401 UNAUTHORIZED`, `open [bearer]`,
 * `close 4001 unauthorized`. Tests compare whole tables of these, so a failure shows every way in.
 */

/** The envelope every refusal must have (docs/errors.md); anything off is named in the observation. */
export function restObservation(response: JsonResponse): string {
  if (response.status < 400) return String(response.status);
  const body = response.body as { data?: unknown; error?: { code?: unknown; message?: unknown; details?: unknown }; meta?: { request_id?: unknown } } | null;
  const problems: string[] = [];
  if (body === null || typeof body !== 'object') return `${response.status} (no JSON envelope: ${JSON.stringify(body)})`;
  if (body.data !== null) problems.push('data is not null');
  if (typeof body.error?.message !== 'string' || body.error.message === '') problems.push('no message');
  if (typeof body.error?.details !== 'object' || body.error.details === null) problems.push('no details');
  if (typeof body.meta?.request_id !== 'string' || body.meta.request_id !== response.headers.get('x-request-id'))
    problems.push('meta.request_id is not X-Request-ID');
  if (!String(response.headers.get('content-type')).startsWith('application/json')) problems.push('not application/json');
  return `${response.status} ${String(body.error?.code)}${problems.length > 0 ? ` (${problems.join(', ')})` : ''}`;
}

/**
 * Opens a WebSocket and says what happened: `open` once `live` saw the connection work (a frame
 * arrived), or `close <code> <reason>` when the hub accepted the handshake only to close it
 * (docs/decisions.md, Auth: refusals accept, then close), or `http <status>` for a refused handshake.
 * ` [bearer]` is added when the hub echoed that subprotocol.
 */
export async function probeSocket(url: string, options: OpenOptions, live: 'first-frame' | 'ping'): Promise<string> {
  let socket;
  try {
    socket = await openSocket(url, options);
  } catch (error) {
    return `http ${(error as { status?: number }).status ?? String(error)}`;
  }
  const protocol = socket.protocol ? ` [${socket.protocol}]` : '';
  if (live === 'ping') socket.send('ping');
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    socket.closed.then((closed) => `close ${closed.code} ${closed.reason}`),
    socket.frames.length > 0 ? 'open' : new Promise<string>((resolve) => socket.ws.once('message', () => resolve('open'))),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('silent'), 5_000))),
  ]);
  clearTimeout(timer);
  socket.close();
  return outcome + protocol;
}

/** One way in for a bearer credential. */
export interface WayIn {
  name: string;
  /** `api-key`: only API keys travel there (X-API-Key); `any`: every bearer credential. */
  takes: 'any' | 'api-key';
  attempt(credential: string): Promise<string>;
  /** What it answers when the credential is good. */
  accepted: string;
}

/** What a way in answers for a refused credential: REST 401 with the code, a socket 4001 with its reason. */
export function refusal(way: WayIn, code: 'UNAUTHORIZED' | 'TOKEN_EXPIRED'): string {
  if (way.name.startsWith('REST')) return `401 ${code}`;
  const reason = code === 'TOKEN_EXPIRED' ? 'token expired' : 'unauthorized';
  return `close 4001 ${reason}${way.accepted.endsWith('[bearer]') ? ' [bearer]' : ''}`;
}

/**
 * Every way in for a bearer credential, as clients use them: what the CLI calls (`whoami` reads
 * /auth/me, `sessions` lists /sessions, `logs` opens the log stream with a header), an admin
 * endpoint, the session socket with the header (CLI, SDKs) and the subprotocol (browsers), the log
 * stream with `?token=` (the spec's way) and the header. `sessionId` is a session the
 * credential's user may open; the credentials tried are an admin's, so a forged one would pass the
 * log stream's role check too.
 */
export function bearerWaysIn(base: string, sessionId: string): WayIn[] {
  const api = `${base}/api/v1`;
  const ws = base.replace(/^http/, 'ws');
  const rest = (path: string, header: (credential: string) => Record<string, string>) => async (credential: string) =>
    restObservation(await request(`${api}${path}`, { headers: header(credential) }));
  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
  return [
    { name: 'REST GET /auth/me (CLI whoami)', takes: 'any', accepted: '200', attempt: rest('/auth/me', bearer) },
    { name: 'REST GET /sessions (CLI sessions)', takes: 'any', accepted: '200', attempt: rest('/sessions', bearer) },
    { name: 'REST GET /users (admin)', takes: 'any', accepted: '200', attempt: rest('/users', bearer) },
    { name: 'REST X-API-Key: GET /auth/me', takes: 'api-key', accepted: '200', attempt: rest('/auth/me', (credential) => ({ 'x-api-key': credential })) },
    {
      name: 'WS session, Authorization header (CLI chat)',
      takes: 'any',
      accepted: 'open',
      attempt: (credential) => probeSocket(`${ws}/ws/v1/sessions/${sessionId}`, { headers: bearer(credential) }, 'first-frame'),
    },
    {
      name: 'WS session, bearer subprotocol (browser)',
      takes: 'any',
      accepted: 'open [bearer]',
      attempt: (credential) => probeSocket(`${ws}/ws/v1/sessions/${sessionId}`, { protocols: ['bearer', credential] }, 'first-frame'),
    },
    {
      name: 'WS log stream, ?token=',
      takes: 'any',
      accepted: 'open',
      attempt: (credential) => probeSocket(`${ws}/ws/v1/logs?level=ERROR&token=${encodeURIComponent(credential)}`, {}, 'ping'),
    },
    {
      name: 'WS log stream, Authorization header (CLI logs)',
      takes: 'any',
      accepted: 'open',
      attempt: (credential) => probeSocket(`${ws}/ws/v1/logs?level=ERROR`, { headers: bearer(credential) }, 'ping'),
    },
  ];
}

/** Tries the ways in one after another: a session keeps one socket per user, a second one replaces the first. */
export async function attemptEach(ways: readonly WayIn[], credential: string): Promise<string[]> {
  const observed: string[] = [];
  for (const way of ways) observed.push(await way.attempt(credential));
  return observed;
}
