import { isValidSlackRequest } from '@slack/bolt';
import express, { type RequestHandler } from 'express';
import { AppError } from '../../src/core/errors';

/**
 * Checks Slack's request signature (`X-Slack-Signature`, v0 HMAC-SHA256 of the timestamp and the
 * raw body; `X-Slack-Request-Timestamp` at most 5 minutes old) before bolt sees the request, so a
 * refusal is the hub's 401 `UNAUTHORIZED` envelope rather than bolt's empty 401. The raw body is
 * handed on as `req.rawBody`, which bolt's receiver reads instead of the stream (and checks again).
 */
export function slackSignatureCheck(signingSecret: string, maxBytes: number): RequestHandler {
  const readBody = express.raw({ type: () => true, limit: maxBytes });
  return (request, response, next) => {
    // Slack only POSTs; anything else goes on to bolt's router, which has no route for it.
    if (request.method !== 'POST') return next();
    readBody(request, response, (error?: unknown) => {
      if (error) return next(error);
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signature = request.get('x-slack-signature');
      const timestamp = Number(request.get('x-slack-request-timestamp'));
      const valid =
        signature !== undefined &&
        Number.isInteger(timestamp) &&
        isValidSlackRequest({
          signingSecret,
          body: body.toString('utf8'),
          headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
        });
      if (!valid) return next(new AppError('UNAUTHORIZED', 'The Slack request signature is missing, wrong or too old.'));
      (request as typeof request & { rawBody: Buffer }).rawBody = body;
      next();
    });
  };
}
