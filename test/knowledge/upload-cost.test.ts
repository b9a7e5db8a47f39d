import fc from 'fast-check';
import http from 'node:http';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { COST_ATTEMPTS, EVENT_LOOP_BUDGET_MS, leastEventLoopDelay } from '../helpers/event-loop';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';
import { hostileHtml } from '../reliability/support/hostile-html';

/**
 * Knowledge uploads are parsed and tokenised off the event loop (issue 26: 1 MB of nested `<div>`
 * blocked the hub 21 s and then answered 500 from a stack overflow; 20 MiB of text blocked it 23 s).
 * Over-deep HTML is refused with 422; big documents are indexed while the hub keeps serving.
 */

let service: RunningService;
let api: string;
let admin: TestUser;
let collection: string;
const BOUNDARY = 'cost-boundary';

beforeAll(async () => {
  service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
  api = `http://127.0.0.1:${service.port}/api/v1`;
  admin = await registerUser(api, 'root');
  const created = await request(`${api}/knowledge/collections`, jsonBody({ name: 'kb' }, { authorization: `Bearer ${admin.token}` }));
  collection = created.body.data.id;
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

function multipartBody(fileName: string, content: string): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    Buffer.from(content),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** Sends a body built beforehand: building it here would put the test's own copying of megabytes into the measured delay. */
function upload(body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(`${api}/knowledge/collections/${collection}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': body.length },
    });
    outgoing.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('knowledge uploads cost the event loop little', () => {
  it('1 MB of nested <div>: 422 too_deep, within the budget', async () => {
    const body = multipartBody('deep.html', '<div>'.repeat(200_000));
    const { result, maxDelayMs } = await leastEventLoopDelay(() => upload(body));
    expect([result.status, result.body.error.code, result.body.error.details.fields.file[0].code]).toEqual([422, 'VALIDATION_ERROR', 'too_deep']);
    expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  }, 60_000);

  it('a 4 MiB text file is chunked off the event loop and indexed, within the budget', async () => {
    const paragraph = 'Rollbacks need the release tag and a green pipeline before anything else happens. ';
    const text = Array.from({ length: (4 * 1024 * 1024) / (paragraph.length * 4) }, (_, index) => `${paragraph.repeat(4)}${index}`).join('\n\n');
    const bodies = Array.from({ length: COST_ATTEMPTS }, (_, attempt) => multipartBody(`handbook-${attempt}.txt`, text));
    const { result, maxDelayMs } = await leastEventLoopDelay((attempt) => upload(bodies[attempt]));
    expect(result.status).toBe(201);
    expect(result.body.data.chunk_count).toBeGreaterThan(1_000);
    expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  }, 180_000);

  it('generated hostile HTML uploads (256 KiB): a 201 or a 422, never blocking', async () => {
    await fc.assert(
      fc.asyncProperty(hostileHtml(256 * 1024), async (html) => {
        const body = multipartBody('hostile.html', html);
        const { result, maxDelayMs } = await leastEventLoopDelay(() => upload(body));
        return [201, 422].includes(result.status) && maxDelayMs <= EVENT_LOOP_BUDGET_MS;
      }),
      { numRuns: 8, seed: 2026 },
    );
  }, 180_000);
});
