import { ProviderError } from '../provider';

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * The error classes both vendor SDKs (openai, @anthropic-ai/sdk) export: they come from the same
 * generator, so one mapping serves both.
 */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
}

/** The HTTP request's own signal: aborted by the caller (cancel, shutdown) or when the stream goes quiet. */
export class StreamGuard {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private idleExpired = false;
  private readonly onCallerAbort = () => this.controller.abort(this.caller.reason);

  constructor(
    private readonly caller: AbortSignal,
    /** Longest silence allowed before the response starts and between two chunks. */
    private readonly idleTimeoutMs: number,
  ) {
    if (caller.aborted) this.controller.abort(caller.reason);
    else caller.addEventListener('abort', this.onCallerAbort, { once: true });
    this.touch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The caller aborted: the provider stops quietly (the runner reports the cancel). */
  get callerAborted(): boolean {
    return this.caller.aborted;
  }

  /** Something arrived: the silence countdown starts again. */
  touch(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.idleExpired = true;
      this.controller.abort(new Error('idle timeout'));
    }, this.idleTimeoutMs);
    this.timer.unref();
  }

  /**
   * The SDKs end a stream quietly when its request is aborted, so a stream cut by the silence
   * countdown looks finished: checked after the loop.
   */
  throwIfExpired(vendor: string): void {
    if (this.idleExpired) throw this.timeoutError(vendor);
  }

  /** The consumer is busy with what arrived: its time does not count as the server's silence. */
  pause(): void {
    clearTimeout(this.timer);
  }

  close(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCallerAbort);
  }

  /**
   * Turns whatever the SDK threw into a ProviderError whose message is safe to show: SDK messages
   * can quote the upstream body, so they only travel as `cause` (logged, never sent to clients).
   */
  toProviderError(error: unknown, vendor: string, sdk: SdkErrorClasses): ProviderError {
    if (error instanceof ProviderError) return error;
    if (this.idleExpired) return this.timeoutError(vendor, error);
    if (error instanceof sdk.APIConnectionTimeoutError) return this.timeoutError(vendor, error);
    if (error instanceof sdk.APIConnectionError) {
      return new ProviderError('unreachable', `The ${vendor} model server could not be reached.`, { cause: error });
    }
    const status = (error as { status?: unknown } | null)?.status;
    if (error instanceof sdk.APIError && typeof status === 'number') {
      return new ProviderError('failed', `The ${vendor} model server answered HTTP ${status}${statusHint(status)}.`, { cause: error });
    }
    if (error instanceof sdk.APIError) {
      return new ProviderError('failed', `The ${vendor} model server reported an error in the middle of its answer.`, { cause: error });
    }
    return new ProviderError('failed', `The ${vendor} model server sent a malformed stream.`, { cause: error });
  }

  private timeoutError(vendor: string, cause?: unknown): ProviderError {
    // Sub-second timeouts (tests) are shown in milliseconds rather than as "0 s".
    const limit = this.idleTimeoutMs >= 1000 ? `${Math.round(this.idleTimeoutMs / 1000)} s` : `${this.idleTimeoutMs} ms`;
    return new ProviderError('unreachable', `The ${vendor} model server did not answer within ${limit}.`, { cause });
  }
}

function statusHint(status: number): string {
  if (status === 401 || status === 403) return ' (check SERVICE_LLM_API_KEY)';
  if (status === 404) return ' (check SERVICE_LLM_MODEL and SERVICE_LLM_BASE_URL)';
  if (status === 429) return ' (rate limited)';
  return '';
}
