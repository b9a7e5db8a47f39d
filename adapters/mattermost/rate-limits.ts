/** Longest Retry-After / X-Ratelimit-Reset honoured, in seconds (a longer one is cut to this). */
export const MAX_LIMIT_PAUSE_S = 60;

/** What one REST call answered. */
export interface Exchange {
  status: number;
  data: unknown;
  /** Mattermost's message for a refusal ('' on success). */
  reason: string;
}

/**
 * How long the bot must pause after this answer, in milliseconds (0: not at all): a 429's
 * `Retry-After` (else `X-Ratelimit-Reset`, else 1 s), or `X-Ratelimit-Reset` when
 * `X-Ratelimit-Remaining` is 0. Mattermost sends both in seconds.
 */
export function limitPause(response: { status: number; headers: { get(name: string): string | null } }): number {
  const seconds = (name: string) => {
    const value = Number(response.headers.get(name));
    return Number.isFinite(value) && value > 0 ? value : null;
  };
  const waitS =
    response.status === 429
      ? (seconds('retry-after') ?? seconds('x-ratelimit-reset') ?? 1)
      : response.headers.get('x-ratelimit-remaining') === '0'
        ? (seconds('x-ratelimit-reset') ?? 1)
        : 0;
  return Math.min(waitS, MAX_LIMIT_PAUSE_S) * 1000;
}

/** Mattermost's `message` of an error body, or the start of a plain-text one (the 429's `limit exceeded`). */
export function serverMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : '';
  } catch {
    return text.trim().slice(0, 200);
  }
}
