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

const update = { update_id: 1, message: { message_id: 1, date: 0, chat: { id: 5, type: 'private' }, from: { id: 5, is_bot: false, first_name: 'A' }, text: 'hi' } };

it('answers a failure to take an update in with 500 INTERNAL_ERROR in the envelope, without its details', async () => {
  const failures: unknown[] = [];
  const response = await request(appReceiving(() => Promise.reject(new Error('disk on fire at /var/lib/x')), failures))
    .post('/webhook')
    .set('x-telegram-bot-api-secret-token', SECRET)
    .send(update);
  expect(response.status).toBe(500);
  expect(response.body).toMatchObject({ data: null, error: { code: 'INTERNAL_ERROR', message: 'The update could not be taken in.' } });
  expect(JSON.stringify(response.body)).not.toContain('disk on fire');
  expect(failures).toHaveLength(1);
});

it('passes a documented refusal through as it is (a store that is down: 503 with Retry-After)', async () => {
  const down = new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly.', { headers: { 'Retry-After': '5' } });
  const response = await request(appReceiving(() => Promise.reject(down)))
    .post('/webhook')
    .set('x-telegram-bot-api-secret-token', SECRET)
    .send(update);
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe('5');
  expect(response.body).toMatchObject({ data: null, error: { code: 'SERVICE_UNAVAILABLE' } });
});
