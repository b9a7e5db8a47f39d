import { createHash, timingSafeEqual } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { VerifyMethod } from '../workflows/events-schema';

/** What checking a webhook request found: its sender's delivery id (for redeliveries) or why it is refused. */
export type Verdict = { ok: true; deliveryId: string | null } | { ok: false; reason: string };

type Headers = Readonly<Record<string, string | string[] | undefined>>;

// ESM-only (its package exports no `require`): loaded once, on the first GitHub-signed request.
let octokit: Promise<typeof import('@octokit/webhooks-methods')> | null = null;

/**
 * Checks a request with the library made for its scheme: GitHub's `X-Hub-Signature-256`
 * (@octokit/webhooks-methods), Standard Webhooks' `webhook-id` / `webhook-timestamp` /
 * `webhook-signature` (standardwebhooks: the signature and a 5-minute timestamp window), a bearer
 * token (constant-time), or nothing (`none`: allowed only with `hooks.allow_unsigned`, checked by the caller).
 */
export async function verifyRequest(method: VerifyMethod, secret: string | null, headers: Headers, body: Buffer): Promise<Verdict> {
  if (method === 'none') return { ok: true, deliveryId: header(headers, 'x-github-delivery') ?? header(headers, 'webhook-id') };
  if (!secret) return { ok: false, reason: 'the hook has no secret configured' };
  switch (method) {
    case 'github':
      return verifyGithub(secret, headers, body);
    case 'standard':
      return verifyStandard(secret, headers, body);
    case 'token':
      return verifyToken(secret, headers);
    default:
      return method satisfies never;
  }
}

async function verifyGithub(secret: string, headers: Headers, body: Buffer): Promise<Verdict> {
  const signature = header(headers, 'x-hub-signature-256');
  if (!signature) return { ok: false, reason: 'missing X-Hub-Signature-256' };
  octokit ??= import('@octokit/webhooks-methods');
  const { verify } = await octokit;
  let valid = false;
  try {
    valid = await verify(secret, body.toString('utf8'), signature);
  } catch {
    valid = false;
  }
  return valid ? { ok: true, deliveryId: header(headers, 'x-github-delivery') } : { ok: false, reason: 'bad signature' };
}

function verifyStandard(secret: string, headers: Headers, body: Buffer): Verdict {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' };
  try {
    new Webhook(secret).verify(body, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature });
    return { ok: true, deliveryId: id };
  } catch (error) {
    const message = error instanceof WebhookVerificationError ? error.message : 'bad signature';
    return { ok: false, reason: /timestamp/i.test(message) ? 'stale or future timestamp' : 'bad signature' };
  }
}

function verifyToken(secret: string, headers: Headers): Verdict {
  const authorization = header(headers, 'authorization') ?? '';
  const match = /^bearer\s+(.+)$/i.exec(authorization.trim());
  if (!match) return { ok: false, reason: 'missing bearer token' };
  // Digests of equal length, so the comparison takes the same time whatever the token's length.
  const given = createHash('sha256').update(match[1]!).digest();
  const expected = createHash('sha256').update(secret).digest();
  return timingSafeEqual(given, expected) ? { ok: true, deliveryId: header(headers, 'idempotency-key') } : { ok: false, reason: 'bad token' };
}

function header(headers: Headers, name: string): string | null {
  const value = headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text && text.length <= 200 ? text : null;
}
