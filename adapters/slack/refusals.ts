/**
 * Slack's answers that mean "this app or workspace cannot use this method" — as opposed to a failure
 * of one call. A refusal is remembered per workspace (until the adapter restarts), so later turns go
 * straight to the fallback instead of asking again; it is not an error and nobody is told about it.
 */
export const REFUSAL_CODES: ReadonlySet<string> = new Set([
  'unknown_method', // an older or sovereign Slack without the method
  'not_allowed_token_type', // the method wants another token type
  'missing_scope', // the app was installed without the scope (assistant:write, chat:write)
  'feature_not_enabled', // the workspace or app has not turned the feature on (Agents & AI Apps)
  'method_deprecated',
  'team_not_allowed',
  'access_denied',
  'no_permission',
]);

/** The optional Slack features the channel falls back from. */
export type SlackFeature = 'stream' | 'status' | 'prompts' | 'reactions';

/** Slack's error code of a failed Web API call (`ok: false`), or null for other failures. */
export function platformError(error: unknown): string | null {
  const code = (error as { data?: { error?: unknown } } | null)?.data?.error;
  return typeof code === 'string' ? code : null;
}

export class WorkspaceRefusals {
  private readonly refused = new Map<string, string>();

  isRefused(workspace: string, feature: SlackFeature): boolean {
    return this.refused.has(`${workspace}:${feature}`);
  }

  /** Remembers `error` if it is a refusal of `feature`; answers whether it was one. */
  note(workspace: string, feature: SlackFeature, error: unknown): boolean {
    const code = platformError(error);
    if (code === null || !REFUSAL_CODES.has(code)) return false;
    this.refused.set(`${workspace}:${feature}`, code);
    return true;
  }

  /** Why `feature` is off in `workspace` (Slack's code), for the log. */
  reason(workspace: string, feature: SlackFeature): string | undefined {
    return this.refused.get(`${workspace}:${feature}`);
  }
}
