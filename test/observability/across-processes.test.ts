import path from 'node:path';
import { OtlpReceiver, type ReceivedSpan } from '../fakes/otlp-receiver';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { createTestPostgresDatabase, type TestPostgresDatabase } from '../helpers/postgres';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { TEST_REDIS_URL, deleteKeys, uniquePrefix } from '../helpers/redis';
import { scrape } from '../helpers/scrape';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { openSocket } from '../helpers/ws-client';

/**
 * Traces and metrics across real processes: an API process (`node dist/src/main.js`, no embedded
 * worker) and a worker process (`node dist/src/worker-main.js`) on PostgreSQL and Redis, exporting
 * spans over OTLP/HTTP to a receiver in this test. One turn — a message over the socket that asks
 * for a file, a confirmation answered `allow` — is one trace whose worker spans hang under the
 * API process's `ingest` span (the context crossed the queue in the job). The worker's metrics are
 * scraped on its own port.
 */
const METRICS_TOKEN = 'metrics-token-0123456789';

let pg: TestPostgresDatabase;
let prefix: string;
let cwd: string;
let receiver: OtlpReceiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  pg = await createTestPostgresDatabase();
  prefix = uniquePrefix('otel');
  cwd = makeTempDir();
  receiver = new OtlpReceiver();
  await receiver.start();
});

afterAll(async () => {
  for (const child of processes) if (child.child.exitCode === null) child.child.kill('SIGTERM');
  await Promise.all(processes.map((child) => child.exited));
  await receiver.stop();
  await pg.drop();
  await deleteKeys(prefix);
  removeTempDirs();
});

function start(kind: 'api' | 'worker'): ServiceProcess {
  const env = {
    ...testEnv(path.join(cwd, 'data'), GENEROUS_RATE_LIMITS),
    SERVICE_DATABASE_URL: pg.url,
    SERVICE_REDIS_URL: TEST_REDIS_URL,
    SERVICE_REDIS_PREFIX: prefix,
    SERVICE_TRACES_OTLP_URL: receiver.url,
    SERVICE_METRICS_ENABLED: 'true',
    SERVICE_METRICS_TOKEN: METRICS_TOKEN,
    ...(kind === 'api' ? { SERVICE_EMBEDDED_WORKER: 'false' } : { SERVICE_METRICS_PORT: '0' }),
  };
  const child = spawnService(env, { cwd, entry: kind === 'api' ? 'dist/src/main.js' : 'dist/src/worker-main.js' });
  processes.push(child);
  return child;
}

it('one turn is one trace across the API and worker processes, with every stage in each process’s metrics', async () => {
  const apiProcess = start('api');
  const base = await readyUrl(apiProcess);
  const worker = start('worker');
  const metricsLine = await worker.waitForLog((entry) => entry.msg === 'metrics served on a port of their own');
  await worker.waitForLog((entry) => entry.msg === 'Switchboard worker is ready');
  const workerMetrics = `http://${metricsLine.metrics_listening}/metrics`;

  const { token } = await registerUser(`${base}/api/v1`, 'root');
  const auth = { authorization: `Bearer ${token}` };
  const sessionId = (await request(`${base}/api/v1/sessions`, jsonBody({}, auth))).body.data.id;
  const socket = await openSocket(`${base.replace('http', 'ws')}/ws/v1/sessions/${sessionId}`, { headers: auth });
  await socket.nextOfType('agent_state');
  socket.send({ type: 'user_message', payload: { text: 'write a file notes.txt containing the meeting notes', mode: 'normal' } });
  const asked = await socket.nextOfType('tool_confirm_request', -Infinity, 30_000);
  socket.send({ type: 'tool_confirm', payload: { confirmation_id: asked.payload.confirmation_id, action: 'allow' } });
  const done = await socket.nextOfType('done', -Infinity, 30_000);
  socket.close();
  const turnId = done.payload.turn_id as string;

  // The spans, as the two processes exported them.
  const [ingest] = await receiver.waitFor((span) => span.name === 'ingest web' && span.attributes['switchboard.turn_id'] === turnId);
  const trace = (name: string) => receiver.spans.filter((span) => span.traceId === ingest!.traceId && span.name.startsWith(name));
  await receiver.waitFor((span) => span.traceId === ingest!.traceId && span.name === 'turn');
  await receiver.waitFor((span) => span.traceId === ingest!.traceId && span.name.startsWith('deliver'));
  const [turn] = trace('turn');
  const byId = new Map(receiver.spans.map((span) => [span.spanId, span]));
  const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);

  expect(ingest!.resource['service.instance.role']).toBe('api');
  expect(turn!.resource['service.instance.role']).toBe('worker');
  expect(turn!.parentSpanId).toBe(ingest!.spanId); // across the queue
  expect(turn!.attributes['switchboard.turn_id']).toBe(turnId);
  expect(parentOf(trace('route')[0]!)).toBe(turn);
  const chats = trace('chat ');
  expect(chats.length).toBeGreaterThanOrEqual(2); // before and after the tool
  for (const chat of chats) {
    expect(parentOf(chat)).toBe(turn);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'builtin',
      'gen_ai.usage.input_tokens': expect.any(Number),
      'gen_ai.usage.output_tokens': expect.any(Number),
    });
  }
  const [tool] = trace('execute_tool write_file');
  expect(parentOf(tool!)).toBe(turn);
  expect(tool!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'write_file' });
  const [confirm] = trace('confirm write_file');
  expect(parentOf(confirm!)).toBe(tool);
  expect(confirm!.attributes['switchboard.confirmation.action']).toBe('allow');
  const [deliver] = trace('deliver web');
  expect(deliver!.resource['service.instance.role']).toBe('api');
  expect(parentOf(deliver!)).toBe(ingest);
  // Nothing of the message or the file's content in any span.
  expect(JSON.stringify(receiver.spans)).not.toContain('meeting notes');

  // The worker's log lines of the turn carry its trace id.
  const ended = await worker.waitForLog((entry) => entry.msg === 'turn ended' && entry.turn_id === turnId);
  expect(ended.trace_id).toBe(ingest!.traceId);

  // Metrics: the API process counted what it did (taking the message in, delivering), the worker the rest.
  const api = await scrape(`${base}/metrics`, METRICS_TOKEN);
  const work = await scrape(workerMetrics, METRICS_TOKEN);
  expect(api.value('switchboard_turn_stage_seconds', { stage: 'accepted', role: 'api' })).toBe(1);
  expect(api.value('switchboard_turn_stage_seconds', { stage: 'delivered', role: 'api' })).toBe(1);
  expect(api.value('switchboard_turn_first_answer_seconds', { channel: 'web' })).toBe(1);
  for (const stage of ['queued', 'routed', 'first_token', 'finished']) {
    expect({ stage, count: work.value('switchboard_turn_stage_seconds', { stage, role: 'worker' }) }).toEqual({ stage, count: 1 });
  }
  expect(work.value('switchboard_turns_ended_total', { channel: 'web', outcome: 'done', role: 'worker' })).toBe(1);
  expect(work.value('switchboard_tool_confirmations_total', { tool: 'write_file', action: 'allow' })).toBe(1);
  expect(work.value('switchboard_tool_calls_total', { tool: 'write_file', outcome: 'ok' })).toBe(1);
  expect(work.value('process_resident_memory_bytes')).toBeGreaterThan(0);
  expect((await fetch(workerMetrics)).status).toBe(401);
}, 90_000);
