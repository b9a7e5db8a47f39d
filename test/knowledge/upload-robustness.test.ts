import http from 'node:http';
import { startService, type RunningService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { jsonBody, request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser, type TestUser } from '../helpers/users';

// Broken multipart uploads: the hub answers 400 in the envelope, stores nothing and keeps serving.

let service: RunningService;
let api: string;
let admin: TestUser;
let collection: string;
const BOUNDARY = 'robustness-boundary';

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

const documentsUrl = () => `${api}/knowledge/collections/${collection}/documents`;

function filePart(fileName: string, content: string): string {
  return `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: text/plain\r\n\r\n${content}`;
}

/** Posts a raw multipart body (a complete HTTP message whose multipart content may be cut short). */
function postMultipart(body: Buffer | string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(documentsUrl(), {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
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

async function documentCount(): Promise<number> {
  const listed = await request(`${api}/knowledge/collections`, { headers: { authorization: `Bearer ${admin.token}` } });
  return listed.body.data.items[0].document_count;
}

async function healthy(): Promise<boolean> {
  return (await request(`${api}/health`)).status === 200;
}

describe('multipart upload robustness', () => {
  it('answers 400 to a body without the closing boundary, stores nothing, and keeps running', async () => {
    for (const truncated of [
      filePart('cut.txt', 'the file content, and then the body ends'), // inside the file part
      `${filePart('cut.txt', 'complete content')}\r\n`, // after the part, before the closing boundary
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="x.txt"`, // inside the part headers
    ]) {
      const response = await postMultipart(truncated);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ data: null, error: { code: 'BAD_REQUEST', message: expect.stringMatching(/cut off/) } });
      expect(await healthy()).toBe(true);
    }
    expect(await documentCount()).toBe(0);
  });

  it('survives a client that disconnects halfway through an upload', async () => {
    await new Promise<void>((resolve) => {
      const outgoing = http.request(documentsUrl(), {
        method: 'POST',
        headers: { authorization: `Bearer ${admin.token}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': '100000' },
      });
      outgoing.on('error', () => resolve());
      outgoing.write(filePart('gone.txt', 'x'.repeat(1000)), () => setTimeout(() => outgoing.destroy(), 50));
      outgoing.on('close', () => resolve());
    });
    expect(await healthy()).toBe(true);
    expect(await documentCount()).toBe(0);
  });

  it('decodes a non-ASCII file name as UTF-8', async () => {
    const name = 'Prüfbericht – 東京 ✓.txt';
    const response = await postMultipart(Buffer.from(`${filePart(name, 'Turbine check passed.')}\r\n--${BOUNDARY}--\r\n`, 'utf8'));
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ title: name, source: name });
    // The form a browser's FormData sends (the same raw UTF-8 bytes) gives the same name.
    const form = new FormData();
    form.append('file', new Blob(['Report body.'], { type: 'text/plain' }), 'Zürich-Bericht.txt');
    const browser = await request(documentsUrl(), { method: 'POST', headers: { authorization: `Bearer ${admin.token}` }, body: form });
    expect(browser.body.data.source).toBe('Zürich-Bericht.txt');
  });
});
