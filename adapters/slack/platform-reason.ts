/**
 * Slack's reason for a failed Web API call, short and without credentials: the platform's error
 * code (`invalid_auth`, `account_inactive`, …) when Slack answered, else the client's message with
 * the network cause under it (`A request error occurred: fetch failed (connect ECONNREFUSED …)`).
 * Tokens travel in headers and bodies, never in these texts.
 */
export function platformReason(error: unknown): string {
  const data = (error as { data?: { error?: unknown } } | null)?.data;
  if (typeof data?.error === 'string') return data.error;
  if (!(error instanceof Error)) return String(error);
  const causes: string[] = [];
  // WebAPIRequestError keeps fetch's error as `original`; fetch's "fetch failed" keeps the socket error as `cause`.
  let inner = (error as { original?: unknown }).original ?? error.cause;
  while (inner instanceof Error && causes.length < 3) {
    if (!error.message.includes(inner.message)) causes.push(inner.message);
    inner = inner.cause;
  }
  const first = error.message.split('\n')[0]!;
  return causes.length > 0 ? `${first} (${causes.join(': ')})` : first;
}
