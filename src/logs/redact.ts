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
  ...['password', 'current_password', 'new_password', 'token', 'access_token', 'refresh_token', 'api_key', 'key', 'secret', 'jwt_secret', 'signing_secret', 'bot_token', 'app_token', 'webhook_secret', 'authorization', 'SAMLResponse'].flatMap(
    (name) => [name, `*.${name}`],
  ),
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

/** Query parameters whose values are secrets (credentials, signatures); other values are useful in logs. */
export const SECRET_QUERY_PARAMETERS = /^(token|access_token|refresh_token|id_token|api_key|apikey|key|secret|password|signature|sig|code|samlresponse|samlrequest|relaystate|client_secret)$/i;

/** Hides the values of secret-named query parameters: `/ws/v1/logs?token=x&level=INFO` → `/ws/v1/logs?token=[redacted]&level=INFO`. */
export function redactSecretQueryValues(url: string): string {
  const mark = url.indexOf('?');
  if (mark < 0) return url;
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
  return `${url.slice(0, mark)}?${parts.join('&')}`;
}
