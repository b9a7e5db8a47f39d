import http from 'node:http';

/** One answer the limiter gave a client. */
export interface Answer {
  status: number;
  /** `RateLimit-Remaining` (absent: the limiter let the request pass without counting it — fail-open). */
  remaining: string | undefined;
  sentAt: number;
  receivedAt: number;
}

/**
 * A client with an address of its own: every connection leaves from `address` (any of 127.0.0.0/8
 * on Linux), so the hub sees a distinct client IP, as it would behind no proxy.
 */
export class AddressedClient {
  readonly answers: Answer[] = [];
  private readonly agent: http.Agent;

  constructor(readonly address: string) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64, localAddress: address } as http.AgentOptions);
  }

  get(url: string): Promise<Answer> {
    const sentAt = Date.now();
    return new Promise((resolve, reject) => {
      const request = http.get(url, { agent: this.agent }, (response) => {
        response.resume();
        response.on('end', () => {
          const answer = {
            status: response.statusCode ?? 0,
            remaining: response.headers['ratelimit-remaining'] as string | undefined,
            sentAt,
            receivedAt: Date.now(),
          };
          this.answers.push(answer);
          resolve(answer);
        });
      });
      request.on('error', reject);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Whether any moving window of `windowMs` holds more than `limit` of `times` (ms), the window as
 * the Redis store counts it: (t − window, t]. Returns the worst window found.
 */
export function worstWindow(times: number[], windowMs: number): { count: number; from: number; to: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let worst = { count: 0, from: 0, to: 0 };
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while (sorted[start]! <= sorted[end]! - windowMs) start += 1;
    const count = end - start + 1;
    if (count > worst.count) worst = { count, from: sorted[start]!, to: sorted[end]! };
  }
  return worst;
}
