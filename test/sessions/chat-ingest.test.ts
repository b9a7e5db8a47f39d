import { startService, type RunningService } from '../../src/main';
import type { InboundMessage } from '../../src/core/inbound';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { request } from '../helpers/http';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

/** The hub port chat adapters use: session by key, contact, platform retries recognised. */
let service: RunningService;

beforeAll(async () => {
  service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider: new ScriptedProvider(),
  });
});

afterAll(async () => {
  await service.stop();
  removeTempDirs();
});

const message = (overrides: Partial<InboundMessage> = {}): InboundMessage => ({
  channel: 'telegram',
  sessionKey: 'telegram::555',
  sender: { userId: 'channel:telegram', contactId: '77', displayName: 'Ada' },
  text: 'hello from telegram',
  mode: 'normal',
  metadata: {},
  externalId: `update-${Math.random()}`,
  ...overrides,
});

it('finds or creates the session of a conversation, keeps its contact, and recognises retried events', async () => {
  const hub = service.hub!;
  const first = message({ externalId: 'update-1' });
  // The platform delivers the same update twice at once: exactly one turn.
  const [a, b] = await Promise.all([hub.ingest(first), hub.ingest(first)]);
  expect([a.duplicate, b.duplicate].sort()).toEqual([false, true]);
  const again = await hub.ingest(first);
  expect(again).toMatchObject({ duplicate: true, sessionId: a.duplicate ? b.sessionId : a.sessionId });

  const api = `http://127.0.0.1:${service.port}/api/v1`;
  const { token } = await registerUser(api, 'root');
  const sessions = await request(`${api}/sessions`, { headers: { authorization: `Bearer ${token}` } });
  const session = sessions.body.data.items.find((item: any) => item.session_key === 'telegram::555');
  expect(session).toMatchObject({ channel: 'telegram', name: 'telegram: Ada' });
  const history = await request(`${api}/sessions/${session.id}/messages`, { headers: { authorization: `Bearer ${token}` } });
  expect(history.body.data.items.filter((m: any) => m.role === 'user')).toHaveLength(1);
  const contacts = await request(`${api}/assistant/contacts`, { headers: { authorization: `Bearer ${token}` } });
  expect(contacts.body.data.items).toEqual([expect.objectContaining({ session_key: 'telegram::555', display_name: 'Ada', tags: [] })]);
});
