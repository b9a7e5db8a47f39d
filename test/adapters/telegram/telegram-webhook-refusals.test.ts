import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { webhookHandler } from '../../../adapters/telegram/webhook';
import { AppError } from '../../../src/core/errors';
import { errorHandler } from '../../../src/api/middleware/error-handler';

/**
 * The webhook's answers when it cannot take an update in, behind the API's own error handler:
 * always non-2xx (so Telegram delivers the update again), always the documented envelope.
 */
const SECRET = 'webhook-secret';

function appReceiving(receive: () => Promise<void>, failures: unknown[] = []) {
  const app = express();
  app.use('/webhook', webhookHandler({ secret: SECRET, maxBytes: 10_000, isRunning: () => true, receive, onFailure: (error) => failures.push(error) }));
  app.use(errorHandler(pino({ level: 'silent' })));
  return app;
}

const update = {
  update_id: 1,
  message: { message_id: 1, date: 0, chat: { id: 5, type: 'private' }, from: { id: 5, is_bot: false, first_name: 'A' }, text: 'hi' },
};

it('answers a failure to store an update with 503 SERVICE_UNAVAILABLE and Retry-After in the envelope, without its details', async () => {
  const failures: unknown[] = [];
  const response = await request(appReceiving(() => Promise.reject(new Error('disk on fire at /var/lib/x')), failures))
    .post('/webhook')
    .set('x-telegram-bot-api-secret-token', SECRET)
    .send(update);
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe('30');
  expect(response.body).toMatchObject({ data: null, error: { code: 'SERVICE_UNAVAILABLE' } });
  expect(JSON.stringify(response.body)).not.toContain('disk on fire');
  expect(failures).toHaveLength(1);
});

it('passes a refusal of the update itself through as it is', async () => {
  const refused = new AppError('VALIDATION_ERROR', 'The text is too long.');
  const response = await request(appReceiving(() => Promise.reject(refused)))
    .post('/webhook')
    .set('x-telegram-bot-api-secret-token', SECRET)
    .send(update);
  expect(response.status).toBe(refused.status);
  expect(response.body).toMatchObject({ data: null, error: { code: 'VALIDATION_ERROR', message: 'The text is too long.' } });
});
