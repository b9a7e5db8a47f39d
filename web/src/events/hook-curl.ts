import type { WorkflowWebhook } from '../api/types';

/** A sample body: templates over fields it lacks render them empty, which is enough to see a turn. */
const SAMPLE_BODY = '{"test": true}';

/**
 * A test request for a hook as a shell command. The signature is a placeholder naming the secret's
 * environment variable: the UI never knows the secret, and a signed request must be signed by the
 * sender. A bearer token is read from that variable by the shell itself, so that command runs as is.
 */
export function hookCurl(url: string, hook: Pick<WorkflowWebhook, 'verify' | 'secret_env'>): string {
  const secret = `$${hook.secret_env ?? 'SECRET'}`;
  const headers = ["-H 'Content-Type: application/json'"];
  if (hook.verify === 'github') {
    headers.push(
      "-H 'X-GitHub-Event: ping'",
      "-H 'X-GitHub-Delivery: <a new id per delivery>'",
      `-H 'X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body, keyed with ${secret}>'`,
    );
  } else if (hook.verify === 'standard') {
    headers.push(
      "-H 'webhook-id: <a new id per delivery>'",
      "-H 'webhook-timestamp: <unix seconds now>'",
      `-H 'webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body", keyed with ${secret}>'`,
    );
  } else if (hook.verify === 'token') {
    headers.push(`-H "Authorization: Bearer ${secret}"`);
  }
  return [`curl -X POST '${url}'`, ...headers, `-d '${SAMPLE_BODY}'`].join(' \\\n  ');
}
