/**
 * Redaction helpers: secrets never reach a log line or an error message.
 */

/** Paths pino replaces with "[redacted]" wherever they appear in a log object. */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["sec-websocket-protocol"]',
  'res.headers["set-cookie"]',
  // Handshake headers logged as a bare `headers` object (WebSocket upgrades) carry credentials too.
  '*["x-api-key"]',
  '*["sec-websocket-protocol"]',
  ...[
    'password',
    'current_password',
    'new_password',
    'token',
    'access_token',
    'refresh_token',
    'api_key',
    'key',
    'secret',
    'jwt_secret',
    'signing_secret',
    'bot_token',
    'app_token',
    'webhook_secret',
    'authorization',
    'SAMLResponse',
  ].flatMap((name) => [name, `*.${name}`]),
];

export const REDACTED = '[redacted]';

/** The log paths of request headers that carry a secret (each channel names its platform's: `secretHeaders`). */
export function secretHeaderPaths(names: readonly string[]): string[] {
  return names.map((name) => `req.headers[${JSON.stringify(name.toLowerCase())}]`);
}

/** `redis://user:pa55@host:6379/0` → `redis://user:***@host:6379/0`; non-URLs are returned unchanged. */
export function redactUrlCredentials(value: string): string {
  try {
    const url = new URL(value);
    if (url.password === '' && url.username === '') return value;
    if (url.password !== '') url.password = '***';
    else url.username = '***';
    return url.toString();
  } catch {
    return value.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/**
 * Query parameters whose values are secrets: every name that looks like one — it contains token,
 * secret, key, pass(word), pwd, signature, credential, auth or saml, or is `sig`, `code`, `state`
 * or `relaystate` — not a list of known names (`?secret_token=` was logged verbatim). Redacting a
 * harmless value (`?keyword=`) costs a log reader little; logging a secret cannot be undone.
 */
export const SECRET_QUERY_PARAMETERS = /token|secret|key|pass|pwd|signature|credential|auth|saml|^(sig|code|state|relaystate)$/i;

/**
 * A Telegram bot token in a path (`/bot123456:AA…/sendMessage`, or a webhook path some set up with
 * the token in it): the whole credential, whatever the route.
 */
const TELEGRAM_TOKEN_IN_PATH = /(^|\/)(bot)?\d{5,}:[A-Za-z0-9_-]{20,}(?=\/|$|\?)/g;

/**
 * Hides secrets in a logged URL: the values of secret-named query parameters
 * (`/ws/v1/logs?token=x&level=INFO` → `/ws/v1/logs?token=[redacted]&level=INFO`) and Telegram bot
 * tokens in the path.
 */
export function redactSecretQueryValues(url: string): string {
  const mark = url.indexOf('?');
  const pathPart = (mark < 0 ? url : url.slice(0, mark)).replace(
    TELEGRAM_TOKEN_IN_PATH,
    (_whole, slash: string, bot: string | undefined) => `${slash}${bot ?? ''}${REDACTED}`,
  );
  if (mark < 0) return pathPart;
  const parts = url
    .slice(mark + 1)
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals < 0 ? part : part.slice(0, equals);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // an undecodable name is matched as it is
      }
      return SECRET_QUERY_PARAMETERS.test(decoded) ? `${name}=${REDACTED}` : part;
    });
  return `${pathPart}?${parts.join('&')}`;
}
