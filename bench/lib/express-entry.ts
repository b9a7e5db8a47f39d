/**
 * The REST baseline: a bare express app with one POST route that parses the same JSON body and
 * answers 202 with a body about the size of the hub's, in a process of its own like the hub under
 * test. Prints `bench floor ready <port>` (the line hub-process.ts waits for).
 */
import type { AddressInfo } from 'node:net';
import express from 'express';

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/api/v1/sessions/:id/messages', (request, response) => {
  response.status(202).json({
    data: { id: request.params.id, role: 'user', content: (request.body as { text?: string }).text ?? '', created_at: new Date().toISOString() },
    error: null,
  });
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`bench floor ready ${(server.address() as AddressInfo).port}\n`));
