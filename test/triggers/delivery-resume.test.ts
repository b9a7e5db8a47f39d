import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeSlackApi } from '../fakes/slack-api';
import { OtlpReceiver } from '../fakes/otlp-receiver';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

/**
 * A delivery cut by a crash (issue 29): the hook was answered 202 and its answer had started in the
 * Slack channel when the embedded hub was killed with SIGKILL. The next start takes the delivery up
 * (its lease ran out), the turn runs again, and the message it had started gets the answer: one
 * message in the chat, delivered once. Then each delivery's span, around the turn's trace.
 */
const CHANNEL = 'C0CRASH';
const HOOK_TOKEN = randomBytes(12).toString('hex');
const processes: ServiceProcess[] = [];
let slack: FakeSlackApi;
let receiver: OtlpReceiver;

beforeAll(async () => {
  slack = new FakeSlackApi();
  await slack.start();
  receiver = new OtlpReceiver();
  await receiver.start();
});

afterAll(async () => {
  for (const child of processes) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  await Promise.all(processes.map((child) => child.exited));
  await slack?.stop();
  await receiver?.stop();
  removeTempDirs();
});

async function deliveryOf(url: string, token: string, id: string, status: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await request(`${url}/api/v1/hooks/deliveries/${id}`, { headers: { authorization: `Bearer ${token}` } });
    if (found.body.data?.status === status) return found.body.data;
    if (Date.now() > deadline) throw new Error(`delivery ${id} is ${JSON.stringify(found.body.data)}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('a delivery cut by a SIGKILL mid-answer is finished by the next start, in the message it started, once', async () => {
  const cwd = makeTempDir();
  writeFileSync(path.join(cwd, 'config.yaml'), 'llm:\n  builtin_token_delay_ms: 60\nhooks:\n  delivery_lease_ms: 2000\n');
  const env = testEnv(path.join(cwd, 'data'), {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_SLACK_BOT_TOKEN: `xoxb-${randomBytes(8).toString('hex')}`,
    SERVICE_SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
    SERVICE_SLACK_API_URL: slack.url,
    CI_HOOK_TOKEN: HOOK_TOKEN,
    SERVICE_TRACES_OTLP_URL: receiver.url,
  });
  const first = spawnService(env, { cwd });
  processes.push(first);
  const url = await readyUrl(first);
  const { token } = await registerUser(`${url}/api/v1`, 'root');
  const hook = { name: 'ci', verify: 'token', secret_env: 'CI_HOOK_TOKEN', message: 'Build {{ payload.build }} passed', deliver: `slack:${CHANNEL}` };
  const created = await request(
    `${url}/api/v1/assistant/workflows`,
    jsonBody({ name: 'builds', events: { webhooks: [hook] } }, { authorization: `Bearer ${token}` }),
  );
  expect(created.status).toBe(201);
  const send = (base: string, build: number) =>
    request(`${base}/api/v1/hooks/builds/ci`, jsonBody({ build }, { authorization: `Bearer ${HOOK_TOKEN}`, 'idempotency-key': `build-${build}` }));

  const accepted = await send(url, 1);
  expect(accepted.status).toBe(202);
  const id = accepted.body.data.delivery_id as string;
  // The answer is streaming into its message (edited as it grows) when the process dies.
  await slack.waitFor((call) => call.method === 'chat.update' && call.args.channel === CHANNEL, 20_000);
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  const started = slack.workspace.messagesIn(CHANNEL);
  expect(started).toHaveLength(1);

  const second = spawnService(env, { cwd });
  processes.push(second);
  const again = await readyUrl(second);
  await second.waitForLog((entry) => entry.msg === 'events: resuming a delivery whose process stopped' && entry.delivery_id === id, 20_000);
  const done = await deliveryOf(again, token, id, 'delivered');
  expect(done.platform_message_id).toBe(started[0]!.ts);
  const messages = slack.workspace.messagesIn(CHANNEL);
  expect(messages).toHaveLength(1);
  expect(messages[0]!.text).toContain('Build 1 passed');
  expect(slack.callsOf('chat.postMessage').filter((call) => call.args.channel === CHANNEL)).toHaveLength(1);
  // Redelivered by the sender after the crash: 200, nothing new.
  expect((await send(again, 1)).status).toBe(200);

  // A delivery's span: the event, its attributes (never the payload), the turn's `ingest events` span its child.
  const next = await send(again, 2);
  await deliveryOf(again, token, next.body.data.delivery_id, 'delivered');
  const [event] = await receiver.waitFor(
    (span) => span.name === 'event webhook builds/ci' && span.attributes['switchboard.delivery_id'] === next.body.data.delivery_id,
  );
  expect(event!.attributes).toMatchObject({
    'switchboard.workflow': 'builds',
    'switchboard.event.source': 'webhook',
    'switchboard.event.name': 'ci',
    'switchboard.delivery.status': 'delivered',
  });
  expect(JSON.stringify(event!.attributes)).not.toContain('"build"');
  expect(JSON.stringify(receiver.spans)).not.toContain(HOOK_TOKEN);
  const [ingest] = await receiver.waitFor((span) => span.name === 'ingest events' && span.parentSpanId === event!.spanId);
  expect(ingest!.traceId).toBe(event!.traceId);
  expect(ingest!.attributes['switchboard.turn_id']).toBe(event!.attributes['switchboard.turn_id']);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
}, 90_000);
