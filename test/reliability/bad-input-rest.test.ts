import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { removeTempDirs } from '../helpers/temp-dir';
import { scaled } from './scale';
import { startBadInputHub, expectRunPassed, type Answer, type BadInputHub } from './support/bad-input-hub';
import { anyJson, draw, hostileString, nested, notUuid, ODD_NUMBERS, ofLength, SEED, TRAVERSALS } from './support/bad-input-values';

/**
 * Bad input on REST, generated with fast-check against a real hub process: JSON of the wrong shape,
 * sizes at and over every documented limit, Unicode edge cases, header abuse, odd ids, path
 * traversal in uploads and static paths, prototype keys, repeated requests. Pass: no crash, no 5xx,
 * no hang (a health probe every 200 ms never waits over 1 s), every refusal the documented envelope,
 * whatever was accepted is readable back, RSS back within 20 %.
 */

const N = scaled(
  { shape: 60, sizes: 60, unicode: 50, headers: 40, ids: 40, traversal: 25, prototype: 20, repeat: 10, warmSessions: 200 },
  { shape: 1_500, sizes: 1_000, unicode: 1_000, headers: 700, ids: 900, traversal: 350, prototype: 300, repeat: 150, warmSessions: 1_100 },
);

let hub: BadInputHub;
/** Real resources, so a hostile body reaches the handler behind valid path parameters. */
const real: { session: string; collection: string; document: string; user: string; apiKey: string; workflow: string } = {} as never;

beforeAll(async () => {
  hub = await startBadInputHub();
  const created = async (route: string, body: unknown) => (await hub.json('POST', route, body))!.json.data;
  real.session = (await created('/sessions', { name: 'target' })).id;
  real.collection = (await created('/knowledge/collections', { name: 'kb' })).id;
  real.document = (await created(`/knowledge/collections/${real.collection}/documents`, { title: 't', text: 'some text to search' })).id;
  real.user = (await created('/users', { username: 'other', email: 'other@example.com', password: 'password-other' })).id;
  real.apiKey = (await created('/auth/api-keys', { label: 'fuzz' })).id;
  real.workflow = (await created('/assistant/workflows', { name: 'target', system_prompt: 'x', triggers: { keywords: ['deploy'] } })).name;
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  removeTempDirs();
});

/** The JSON operations a body goes to, with a valid body to start from (path parameters real). */
const BODY_TARGETS: { method: string; route: () => string; valid: () => Record<string, unknown> }[] = [
  { method: 'POST', route: () => '/sessions', valid: () => ({ name: 'fuzz' }) },
  { method: 'PATCH', route: () => `/sessions/${real.session}`, valid: () => ({ name: 'renamed', config: { max_steps: 3 } }) },
  { method: 'POST', route: () => `/sessions/${real.session}/messages`, valid: () => ({ text: 'hello', metadata: { source: 'fuzz' } }) },
  { method: 'DELETE', route: () => `/sessions/${real.session}/messages`, valid: () => ({ keep_last: 50 }) },
  { method: 'PATCH', route: () => `/sessions/${real.session}/memory`, valid: () => ({ mode: 'summary' }) },
  { method: 'PATCH', route: () => `/sessions/${real.session}/tools`, valid: () => ({ enable: ['calculator'] }) },
  {
    method: 'POST',
    route: () => '/assistant/workflows',
    valid: () => ({ name: `w${randomUUID().slice(0, 8)}`, system_prompt: 'be brief', tool_list: '', triggers: { keywords: ['x'] } }),
  },
  { method: 'PUT', route: () => `/assistant/workflows/${real.workflow}`, valid: () => ({ system_prompt: 'y', triggers: { keywords: ['deploy'] } }) },
  { method: 'PATCH', route: () => `/assistant/workflows/${real.workflow}`, valid: () => ({ description: 'd' }) },
  { method: 'POST', route: () => '/assistant/workflows/sync', valid: () => ({ workflows: [{ name: 'synced', system_prompt: 'x' }] }) },
  { method: 'PUT', route: () => '/assistant/binding-channels/web', valid: () => ({ workflows: [] }) },
  { method: 'PUT', route: () => '/assistant/contacts/telegram::4242', valid: () => ({ display_name: 'n', tags: ['vip'] }) },
  { method: 'POST', route: () => '/assistant/routing/test', valid: () => ({ text: 'deploy now', channel: 'web' }) },
  { method: 'POST', route: () => '/knowledge/collections', valid: () => ({ name: `kb${randomUUID().slice(0, 8)}` }) },
  { method: 'POST', route: () => `/knowledge/collections/${real.collection}/documents`, valid: () => ({ title: 't', text: 'text' }) },
  { method: 'POST', route: () => `/knowledge/collections/${real.collection}/search`, valid: () => ({ query: 'text' }) },
  { method: 'POST', route: () => '/auth/login', valid: () => ({ username: 'root', password: 'wrong-password' }) },
  { method: 'POST', route: () => '/auth/refresh', valid: () => ({ refresh_token: 'x' }) },
  { method: 'POST', route: () => '/auth/logout', valid: () => ({ refresh_token: 'x' }) },
  { method: 'POST', route: () => '/auth/api-keys', valid: () => ({ label: 'k' }) },
  {
    method: 'POST',
    route: () => '/users',
    valid: () => ({ username: `u${randomUUID().slice(0, 8)}`, email: `${randomUUID().slice(0, 8)}@example.com`, password: 'long-enough-1' }),
  },
  { method: 'PATCH', route: () => `/users/${real.user}`, valid: () => ({ role: 'user' }) },
];

/**
 * Reads back what a 2xx said it stored; a mismatch is a violation. Only creations whose answer names
 * the thing (sessions, messages, workflows, documents) are read back.
 */
async function expectStored(label: string, method: string, route: string, sent: unknown, answer: Answer): Promise<void> {
  if (answer.status >= 300 || typeof sent !== 'object' || sent === null) return;
  const body = sent as Record<string, unknown>;
  const data = answer.json?.data;
  const mismatch = (what: string, got: unknown, wanted: unknown) => {
    if (got !== wanted) hub.violate('not-stored', label, `${what}: stored ${JSON.stringify(got)?.slice(0, 80)}, sent ${JSON.stringify(wanted)?.slice(0, 80)}`);
  };
  if (method === 'POST' && route === '/sessions') {
    const stored = (await hub.json('GET', `/sessions/${data.id}`))?.json?.data;
    if (typeof body.name === 'string') mismatch('session name', stored?.name, body.name.trim());
  } else if (method === 'POST' && /^\/sessions\/[^/]+\/messages$/.test(route) && answer.status === 202) {
    const history = (await hub.json('GET', `${route}?limit=100`))?.json?.data?.items as { id: string; content: string }[] | undefined;
    mismatch('message content', history?.find((message) => message.id === data.id)?.content, body.text ?? body.content);
  } else if (method === 'POST' && route === '/assistant/workflows') {
    const stored = (await hub.json('GET', `/assistant/workflows/${encodeURIComponent(String(data.name))}`))?.json?.data;
    mismatch('workflow system_prompt', stored?.system_prompt, body.system_prompt ?? '');
  } else if (method === 'POST' && /^\/knowledge\/collections\/[^/]+\/documents$/.test(route)) {
    const stored = (await hub.json('GET', `${route}/${data.id}`))?.json?.data;
    mismatch('document title', stored?.title, typeof body.title === 'string' ? body.title.trim() : body.title);
  }
}

async function sendJson(
  kind: string,
  method: string,
  route: string,
  body: string | object,
  headers: Record<string, string> = hub.auth(),
): Promise<Answer | null> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const label = `${method} ${route} ${text.slice(0, 120)}`;
  const answer = hub.check(kind, label, await hub.json(method, route, text, headers));
  if (answer && typeof body === 'object') await expectStored(label, method, route, body, answer);
  return answer;
}

const pickTarget = fc.integer({ min: 0, max: BODY_TARGETS.length - 1 }).map((index) => BODY_TARGETS[index]!);

let rssBaselineKiB = 0;

it('warms up, then records the baseline RSS and starts the health probe', async () => {
  // One pass of every target with its valid body: code paths, pools and caches in place before the baseline.
  for (const target of BODY_TARGETS) await hub.json(target.method, target.route(), target.valid());
  // And the heaviest shapes once each (a 1 MiB body, a 700,000-item array, 20,000 levels): the heap they need is part of the baseline.
  await hub.json('POST', '/sessions', `{"name":"w","pad":"${'p'.repeat(1024 * 1024 - 30)}"}`);
  await hub.json('POST', '/sessions', `{"items":[${Array(700_000).fill('0').join(',')}]}`);
  await hub.json('POST', '/sessions', nested(20_000, 'array'));
  // And sessions with a turn each, as many as the run makes (the worker keeps the conversations of the
  // last 1,000 sessions by design: a bounded cache, full in the baseline, so that the RSS figure
  // measures growth past it).
  for (let index = 0; index < N.warmSessions; index += 1) {
    const session = (await hub.json('POST', '/sessions', { name: 'warm' }))!.json.data.id;
    await hub.json('POST', `/sessions/${session}/messages`, { text: 'hello there' });
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  rssBaselineKiB = hub.rssKiB();
  expect(rssBaselineKiB).toBeGreaterThan(10_000);
  hub.startProbe();
}, 300_000);

it('JSON of the wrong shape: wrong types, nulls, deep nesting, huge arrays', async () => {
  const cases = draw(
    fc.tuple(
      pickTarget,
      fc.oneof(
        // A valid body with one field replaced by anything (or a new unknown field).
        fc.tuple(fc.string({ maxLength: 12 }), anyJson()).map(([key, value]) => ({ kind: 'field', key, value })),
        // The body itself not an object.
        anyJson().map((value) => ({ kind: 'top', value })),
        // Deep nesting in a field or as the body, around the 32-level limit and far past it.
        fc.record({
          kind: fc.constant('deep'),
          levels: fc.oneof(fc.integer({ min: 28, max: 36 }), fc.integer({ min: 37, max: 20_000 })),
          shape: fc.constantFrom('object' as const, 'array' as const),
          asBody: fc.boolean(),
        }),
        // Huge arrays, under and over the 1 MiB body limit.
        fc.record({
          kind: fc.constant('huge'),
          length: fc.oneof(fc.integer({ min: 1_000, max: 100_000 }), fc.integer({ min: 500_000, max: 700_000 })),
          item: fc.constantFrom('0', 'null', '"x"', '{}', '[]'),
        }),
      ),
    ),
    N.shape,
    1,
  );
  for (const [target, mutation] of cases) {
    const route = target.route();
    const valid = target.valid();
    let body: string | object;
    let expectDeep = false;
    if (mutation.kind === 'field') {
      const m = mutation as { key: string; value: unknown };
      const keys = Object.keys(valid);
      const key = keys.length > 0 && m.key.length % 2 === 0 ? keys[m.key.length % keys.length]! : m.key;
      body = { ...valid, [key]: m.value };
    } else if (mutation.kind === 'top') {
      body = JSON.stringify((mutation as { value: unknown }).value) ?? 'null';
    } else if (mutation.kind === 'deep') {
      const m = mutation as { levels: number; shape: 'object' | 'array'; asBody: boolean };
      const deep = nested(m.levels, m.shape);
      body = m.asBody ? deep : JSON.stringify(valid).replace(/}$/, `,"metadata":${deep}}`);
      expectDeep = (m.asBody ? m.levels : m.levels + 1) > 32;
    } else {
      const m = mutation as { length: number; item: string };
      body = JSON.stringify(valid).replace(/}$/, `,"items":[${Array(m.length).fill(m.item).join(',')}]}`);
    }
    const answer = await sendJson('json-shape', target.method, route, body);
    if (answer && expectDeep && answer.status < 400)
      hub.violate('unexpected', `json-shape deep ${target.method} ${route}`, `accepted ${answer.status}: deeper than 32 levels`);
    if (answer && Buffer.byteLength(typeof body === 'string' ? body : JSON.stringify(body)) > 1024 * 1024 && answer.status !== 413) {
      hub.violate('unexpected', `json-shape huge ${target.method} ${route}`, `a body over 1 MiB answered ${answer.status}`);
    }
  }
}, 600_000);

/** Documented limits: [label, min, max, the request that carries a value of that length]. */
const LIMITS: { field: string; min: number; max: number; request: (value: string) => { method: string; route: string; body: Record<string, unknown> } }[] = [
  { field: 'name', min: 1, max: 200, request: (value) => ({ method: 'POST', route: '/sessions', body: { name: value } }) },
  { field: 'label', min: 1, max: 100, request: (value) => ({ method: 'POST', route: '/auth/api-keys', body: { label: value } }) },
  { field: 'text', min: 1, max: 65_536, request: (value) => ({ method: 'POST', route: `/sessions/${real.session}/messages`, body: { text: value } }) },
  {
    field: 'query',
    min: 1,
    max: 1_000,
    request: (value) => ({ method: 'POST', route: `/knowledge/collections/${real.collection}/search`, body: { query: value } }),
  },
  {
    field: 'title',
    min: 1,
    max: 300,
    request: (value) => ({ method: 'POST', route: `/knowledge/collections/${real.collection}/documents`, body: { title: value, text: 'body' } }),
  },
  {
    field: 'description',
    min: 0,
    max: 2_000,
    request: (value) => ({ method: 'POST', route: '/assistant/workflows', body: { name: `w${randomUUID().slice(0, 8)}`, description: value } }),
  },
  {
    field: 'display_name',
    min: 0,
    max: 200,
    request: (value) => ({ method: 'PUT', route: '/assistant/contacts/telegram::5151', body: { display_name: value } }),
  },
  {
    field: 'password',
    min: 8,
    max: 128,
    request: (value) => ({
      method: 'POST',
      route: '/users',
      body: { username: `u${randomUUID().slice(0, 8)}`, email: `${randomUUID().slice(0, 8)}@example.com`, password: value },
    }),
  },
  { field: 'refresh_token', min: 1, max: 512, request: (value) => ({ method: 'POST', route: '/auth/logout', body: { refresh_token: value } }) },
];

it('sizes at and over every documented limit (fields, query limits, headers, the 1 MiB body, gzip)', async () => {
  const fieldCases = draw(
    fc.record({
      limit: fc.integer({ min: 0, max: LIMITS.length - 1 }),
      edge: fc.constantFrom('min-1', 'min', 'max', 'max+1', 'max*4'),
      alphabet: fc.constantFrom('a', 'é', '中', '😀', 'a😀'),
    }),
    Math.ceil(N.sizes * 0.6),
    2,
  );
  for (const { limit, edge, alphabet } of fieldCases) {
    const spec = LIMITS[limit]!;
    const count = { 'min-1': spec.min - 1, min: spec.min, max: spec.max, 'max+1': spec.max + 1, 'max*4': spec.max * 4 }[edge];
    if (count < 0) continue;
    let value = ofLength(count, alphabet);
    if (spec.field === 'name' || spec.field === 'title' || spec.field === 'label') value = value.replace(/^\s|\s$/g, 'a'); // trimmed fields: no edge whitespace
    const { method, route, body } = spec.request(value);
    const session = route.includes('/messages') ? (await hub.json('POST', '/sessions', { name: 'sized' }))!.json.data.id : null;
    const target = session ? route.replace(real.session, session) : route;
    const answer = await sendJson('sizes', method, target, body);
    if (!answer) continue;
    const within = count >= spec.min && count <= spec.max;
    const named = answer.json?.error?.details?.fields?.[spec.field] !== undefined;
    if (within && answer.status === 422 && named)
      hub.violate('unexpected', `sizes ${spec.field}=${count} characters of ${alphabet}`, 'refused at or within the documented limit');
    if (!within && !(answer.status === 422 && named) && answer.status !== 413)
      hub.violate('unexpected', `sizes ${spec.field}=${count} characters of ${alphabet}`, `answered ${answer.status}, not 422 naming the field`);
  }
  // Paging limits (1–100) and the Idempotency-Key header (1–255 printable ASCII).
  const pageCases = draw(fc.constantFrom(0, 1, 100, 101, -1, 1_000_000), Math.ceil(N.sizes * 0.15), 3);
  for (const limit of pageCases) {
    const answer = hub.check('sizes', `GET /sessions?limit=${limit}`, await hub.json('GET', `/sessions?limit=${limit}`));
    if (answer && (limit >= 1 && limit <= 100) !== (answer.status === 200)) hub.violate('unexpected', `sizes limit=${limit}`, `answered ${answer.status}`);
  }
  const keyCases = draw(fc.constantFrom(1, 255, 256, 1_000), Math.ceil(N.sizes * 0.1), 4);
  for (const length of keyCases) {
    const session = (await hub.json('POST', '/sessions', {}))!.json.data.id;
    const answer = hub.check(
      'sizes',
      `Idempotency-Key of ${length}`,
      await hub.json('POST', `/sessions/${session}/messages`, { text: 'hi' }, { ...hub.auth(), 'idempotency-key': 'k'.repeat(length) }),
    );
    if (answer && length <= 255 !== (answer.status === 202)) hub.violate('unexpected', `sizes idempotency-key ${length}`, `answered ${answer.status}`);
  }
  // The JSON body limit itself: exactly 1 MiB is read (whatever the schema says of it), one byte more is 413.
  const bodyCases = draw(fc.record({ delta: fc.constantFrom(-1, 0, 1, 1_000), gzip: fc.boolean() }), Math.ceil(N.sizes * 0.15), 5);
  for (const { delta, gzip } of bodyCases) {
    const session = (await hub.json('POST', '/sessions', {}))!.json.data.id;
    const frame = JSON.stringify({ text: 'hi', metadata: { pad: '' } });
    const text = frame.replace('"pad":""', `"pad":"${'p'.repeat(1024 * 1024 + delta - frame.length)}"`);
    const headers = { ...hub.auth(), 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) };
    const answer = hub.check(
      'sizes',
      `body of 1 MiB ${delta >= 0 ? '+' : ''}${delta}${gzip ? ' gzip' : ''}`,
      await hub.send({ method: 'POST', target: `/api/v1/sessions/${session}/messages`, headers, body: gzip ? gzipSync(text) : text }),
    );
    if (!answer) continue;
    if (delta <= 0 && answer.status === 413) hub.violate('unexpected', `sizes body ${delta}`, 'a body within 1 MiB was refused as too large');
    if (delta > 0 && (answer.status !== 413 || answer.json.error.details.limit_bytes !== 1024 * 1024))
      hub.violate('unexpected', `sizes body +${delta}`, `answered ${answer.status}, not 413 with limit_bytes`);
  }
}, 600_000);

it('Unicode edge cases: lone surrogates, NUL, bidi marks, invalid UTF-8 bytes', async () => {
  const cases = draw(
    fc.record({
      value: hostileString(60),
      where: fc.constantFrom('session', 'message', 'workflow', 'document', 'contact', 'search', 'path', 'query', 'bytes'),
    }),
    N.unicode,
    6,
  );
  for (const { value, where } of cases) {
    const hasNul = value.includes('\u0000');
    let answer: Answer | null = null;
    if (where === 'session') answer = await sendJson('unicode', 'POST', '/sessions', { name: value });
    else if (where === 'message') {
      const session = (await hub.json('POST', '/sessions', {}))!.json.data.id;
      answer = await sendJson('unicode', 'POST', `/sessions/${session}/messages`, { text: value, metadata: { [value]: value } });
    } else if (where === 'workflow')
      answer = await sendJson('unicode', 'POST', '/assistant/workflows', {
        name: `u${randomUUID().slice(0, 8)}`,
        system_prompt: value,
        triggers: { keywords: [value] },
      });
    else if (where === 'document')
      answer = await sendJson('unicode', 'POST', `/knowledge/collections/${real.collection}/documents`, { title: `t${value}`, text: value });
    else if (where === 'contact')
      answer = await sendJson('unicode', 'PUT', '/assistant/contacts/telegram::6161', { display_name: value.slice(0, 200), tags: [value] });
    else if (where === 'search') answer = await sendJson('unicode', 'POST', `/knowledge/collections/${real.collection}/search`, { query: value });
    else if (where === 'path')
      answer = hub.check(
        'unicode',
        `path ${JSON.stringify(value)}`,
        await hub.json('GET', `/assistant/workflows/${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'))}`),
      );
    else if (where === 'query')
      answer = hub.check(
        'unicode',
        `query ${JSON.stringify(value)}`,
        await hub.json('GET', `/sessions?cursor=${encodeURIComponent(value.replace(/[\ud800-\udfff]/g, '\ufffd'))}`),
      );
    else {
      // Raw bytes that are not UTF-8 (overlong, lone continuation, surrogate halves encoded) inside a JSON string.
      const bad = Buffer.from([0xc0, 0xaf, 0xff, 0xfe, 0x80, 0xed, 0xa0, 0x80, 0xf8, 0x88, 0x80, 0x80, 0x80]);
      const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from(value.replace(/["\\\u0000-\u001f]/g, '')), bad, Buffer.from('"}')]);
      answer = hub.check(
        'unicode',
        `invalid UTF-8 ${JSON.stringify(value)}`,
        await hub.send({ method: 'POST', target: '/api/v1/sessions', headers: { ...hub.auth(), 'content-type': 'application/json' }, body }),
      );
    }
    if (answer && hasNul && where !== 'path' && where !== 'query' && where !== 'bytes' && answer.status < 400)
      hub.violate('unexpected', `unicode ${where} ${JSON.stringify(value)}`, `NUL accepted (${answer.status})`);
  }
}, 600_000);

it('header abuse: duplicate Authorization, odd content types, garbage X-Forwarded-For and request ids', async () => {
  const other = (await hub.json('POST', '/auth/login', { username: 'other', password: 'password-other' }))!.json.data.access_token as string;
  const cases = draw(
    fc.record({
      authorization: fc.constantFrom<'one' | 'dup-same' | 'dup-garbage-first' | 'dup-garbage-last' | 'dup-two-users' | 'garbage' | 'none' | 'key-and-bearer'>(
        'one',
        'dup-same',
        'dup-garbage-first',
        'dup-garbage-last',
        'dup-two-users',
        'garbage',
        'none',
        'key-and-bearer',
      ),
      contentType: fc.constantFrom(
        'application/json',
        'text/plain',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        '',
        'application/json, text/html',
        'application/vnd.api+json',
        ';;;',
        'a'.repeat(4_000),
        'application/json; charset="utf-8"; x=\u00ff',
      ),
      forwardedFor: fc.oneof(
        fc.constantFrom(
          '',
          'unknown',
          '::1',
          '999.999.999.999',
          '1.2.3.4, , ,',
          '1.2.3.4'.repeat(500),
          '"; DROP TABLE',
          '2001:db8::1%eth0',
          '[::1]:80',
          '\u00ff\u00fe',
        ),
        fc.array(fc.ipV4(), { maxLength: 200 }).map((ips) => ips.join(', ')),
      ),
      requestId: fc.constantFrom(undefined, 'not-a-uuid', randomUUID(), randomUUID().toUpperCase(), 'x'.repeat(10_000), '../../etc'),
      route: fc.constantFrom('/sessions', '/auth/me', `/sessions/${'{session}'}/messages`),
    }),
    N.headers,
    7,
  );
  for (const c of cases) {
    const bearer = `Bearer ${hub.admin.token}`;
    const authorization: Record<string, string | string[]> = {
      one: { authorization: bearer },
      'dup-same': { authorization: [bearer, bearer] },
      'dup-garbage-first': { authorization: ['Bearer garbage', bearer] },
      'dup-garbage-last': { authorization: [bearer, 'Basic Z2FyYmFnZQ=='] },
      'dup-two-users': { authorization: [bearer, `Bearer ${other}`] },
      garbage: { authorization: 'Bearer \u00ff'.padEnd(9_000, '=') },
      none: {},
      'key-and-bearer': { authorization: bearer, 'x-api-key': 'svc_live_garbage' },
    }[c.authorization];
    const route = c.route.replace('{session}', real.session);
    const body = route.endsWith('/messages') ? '{"text":"hi"}' : '{"name":"h"}';
    const headers = {
      ...authorization,
      'content-type': c.contentType,
      'x-forwarded-for': c.forwardedFor,
      ...(c.requestId ? { 'x-request-id': c.requestId } : {}),
    };
    const method = route === '/auth/me' ? 'GET' : 'POST';
    const answer = hub.check(
      'headers',
      `${method} ${route} ${JSON.stringify(c).slice(0, 160)}`,
      await hub.send({ method, target: `/api/v1${route}`, headers, body: method === 'GET' ? undefined : body }),
    );
    // Two different credentials are ambiguous: never served as either.
    if (answer && c.authorization.startsWith('dup-') && c.authorization !== 'dup-same' && answer.status < 400) {
      hub.violate('unexpected', `headers ${c.authorization} ${method} ${route}`, `served (${answer.status}) with two different Authorization headers`);
    }
  }
}, 600_000);

it('ids and numbers: non-UUID, negative, 2^53, NaN in path ids, query limits and cursors', async () => {
  const routes = [
    '/sessions/{id}',
    '/sessions/{id}/messages',
    '/sessions/{id}/restore',
    '/sessions/{id}/cancel',
    '/sessions/{id}/tools',
    '/sessions/{id}/memory',
    '/users/{id}',
    '/auth/api-keys/{id}',
    '/knowledge/collections/{id}/documents/{id}',
    '/assistant/workflows/{id}',
    '/assistant/contacts/{id}',
  ];
  const cases = draw(
    fc.record({
      route: fc.constantFrom(...routes),
      id: notUuid(),
      method: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT'),
      query: fc.constantFrom(...ODD_NUMBERS),
    }),
    N.ids,
    8,
  );
  for (const c of cases) {
    const route = c.route.replaceAll('{id}', encodeURIComponent(c.id.replace(/[\ud800-\udfff]/g, '\ufffd')));
    const body = c.method === 'GET' || c.method === 'DELETE' ? undefined : '{}';
    hub.check('ids', `${c.method} ${route.slice(0, 80)}`, await hub.json(c.method, route, body));
    const list = ['/sessions', '/users', '/auth/api-keys', '/audit', '/usage', '/assistant/workflows', '/knowledge/collections'][c.id.length % 7];
    hub.check(
      'ids',
      `GET ${list}?limit=${c.query}`,
      await hub.json('GET', `${list}?limit=${encodeURIComponent(c.query)}&cursor=${encodeURIComponent(c.query)}`),
    );
  }
}, 600_000);

/** A multipart upload of one file. */
function upload(fileName: string, content: string | Buffer, title?: string): { headers: Record<string, string>; body: Buffer } {
  const boundary = `----fuzz${randomUUID()}`;
  const parts = [
    ...(title === undefined ? [] : [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\n${title}\r\n`)]),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: text/plain\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ];
  return { headers: { ...hub.auth(), 'content-type': `multipart/form-data; boundary=${boundary}` }, body: Buffer.concat(parts) };
}

it('path traversal in every file-ish input: upload names, titles, workflow names, static paths', async () => {
  const marker = `fuzz-${randomUUID()}`;
  const cases = draw(
    fc.record({
      traversal: fc.constantFrom(...TRAVERSALS),
      where: fc.constantFrom('upload', 'title', 'workflow', 'static', 'collection'),
      suffix: fc.constantFrom('', '.txt', '.md', '.html', '.pdf', '.exe', '%00.txt'),
    }),
    N.traversal,
    9,
  );
  for (const c of cases) {
    const name = `${c.traversal}${c.suffix}`;
    if (c.where === 'upload' || c.where === 'title') {
      const form = c.where === 'upload' ? upload(name, `${marker} text`) : upload('ok.txt', `${marker} text`, name);
      const route = `/knowledge/collections/${real.collection}/documents`;
      const answer = hub.check(
        'path-traversal',
        `upload ${c.where} ${JSON.stringify(name)}`,
        await hub.send({ method: 'POST', target: `/api/v1${route}`, ...form }),
      );
      if (answer && answer.status === 201) {
        const stored = (await hub.json('GET', `${route}/${answer.json.data.id}`))?.json?.data;
        if (!stored || stored.id !== answer.json.data.id) hub.violate('not-stored', `upload ${JSON.stringify(name)}`, 'accepted but not readable');
      }
    } else if (c.where === 'workflow') {
      hub.check('path-traversal', `workflow ${JSON.stringify(name)}`, await hub.json('POST', '/assistant/workflows', { name, system_prompt: marker }));
      hub.check('path-traversal', `GET workflow ${JSON.stringify(name)}`, await hub.json('GET', `/assistant/workflows/${encodeURIComponent(name)}`));
    } else if (c.where === 'collection') {
      hub.check('path-traversal', `collection ${JSON.stringify(name)}`, await hub.json('POST', '/knowledge/collections', { name }));
    } else {
      // The web UI's static files and the API docs: never a file from outside dist/web.
      for (const prefix of ['/', '/assets/', '/api/v1/docs/', '/webchat/']) {
        const target = `${prefix}${name.replace(/[\u0000\u2215\uff0e]/g, (ch) => encodeURIComponent(ch))}`;
        const answer = hub.check('path-traversal', `GET ${target}`, await hub.send({ method: 'GET', target, headers: {} }));
        if (answer && /root:x:0:0|\[extensions\]|SQLite format/.test(answer.text))
          hub.violate('unexpected', `static ${target}`, 'served a file from outside the web UI');
      }
    }
  }
  // Nothing named by the traversals exists outside the hub's data directory.
  for (const escaped of ['/etc/passwd.txt', path.resolve(hub.cwd, '..', 'etc'), path.resolve(hub.cwd, 'deep')])
    expect(existsSync(escaped) && escaped.includes(marker)).toBe(false);
}, 600_000);

it('prototype keys (__proto__, constructor, prototype) change nothing and are stored as data or refused', async () => {
  const cases = draw(
    fc.record({
      key: fc.constantFrom('__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString', 'valueOf'),
      where: fc.constantFrom('top', 'metadata', 'config', 'triggers'),
      value: anyJson(),
    }),
    N.prototype,
    10,
  );
  for (const c of cases) {
    const inner = JSON.stringify({ role: 'admin', is_admin: true, polluted: 1 });
    if (c.where === 'top') {
      await sendJson('prototype', 'POST', '/sessions', `{"name":"p","${c.key}":${inner}}`);
      await sendJson('prototype', 'PATCH', `/users/${real.user}`, `{"${c.key}":{"role":"admin"},"active":true}`);
    } else if (c.where === 'metadata') {
      const session = (await hub.json('POST', '/sessions', {}))!.json.data.id;
      const answer = await sendJson(
        'prototype',
        'POST',
        `/sessions/${session}/messages`,
        `{"text":"proto","metadata":{"${c.key}":${inner},"x":${JSON.stringify(c.value) ?? 'null'}}}`,
      );
      if (answer?.status === 202) await expectStored(`prototype ${c.key}`, 'POST', `/sessions/${session}/messages`, { text: 'proto' }, answer);
    } else if (c.where === 'config') {
      await sendJson('prototype', 'POST', '/sessions', `{"config":{"${c.key}":${inner}}}`);
    } else {
      await sendJson('prototype', 'POST', '/assistant/workflows', `{"name":"p${randomUUID().slice(0, 8)}","triggers":{"${c.key}":${inner},"keywords":["a"]}}`);
    }
  }
  // Still exactly one admin, and the other user still a plain user.
  const users = (await hub.json('GET', '/users?limit=100'))!.json.data.items as { username: string; role: string }[];
  expect(users.filter((user) => user.role === 'admin').map((user) => user.username)).toEqual(['root']);
  const session = (await hub.json('POST', '/sessions', {}))!.json.data;
  expect(Object.keys(session)).not.toContain('polluted');
}, 600_000);

it('the same request repeated: one message per Idempotency-Key, idempotent methods stay idempotent, refusals store nothing', async () => {
  for (let round = 0; round < N.repeat; round += 1) {
    const session = (await hub.json('POST', '/sessions', { name: `repeat ${round}` }))!.json.data.id as string;
    const key = `key-${round}-${SEED}`;
    // Five at once, then five more: one message stored, every 2xx names it, the others are 409 CONFLICT.
    const send = () => hub.json('POST', `/sessions/${session}/messages`, { text: `once ${round}` }, { ...hub.auth(), 'idempotency-key': key });
    const answers = [...(await Promise.all(Array.from({ length: 5 }, send))), ...(await Promise.all(Array.from({ length: 5 }, send)))];
    const ids = new Set<string>();
    for (const answer of answers) {
      const checked = hub.check('repeat', `idempotent message ${round}`, answer);
      if (checked && checked.status < 300) ids.add(checked.json.data.id);
      else if (checked && checked.json?.error?.code !== 'CONFLICT')
        hub.violate('unexpected', `repeat ${round}`, `answered ${checked.status} ${checked.json?.error?.code}`);
    }
    const history = (await hub.json('GET', `/sessions/${session}/messages?limit=100`))!.json.data.items as { role: string; content: string }[];
    const stored = history.filter((message) => message.role === 'user' && message.content === `once ${round}`);
    if (ids.size !== 1 || stored.length !== 1) hub.violate('unexpected', `repeat ${round}`, `${ids.size} ids answered, ${stored.length} messages stored`);
    // A refused message (422) stores nothing, however often it is sent.
    for (let i = 0; i < 3; i += 1)
      hub.check(
        'repeat',
        'refused message',
        await hub.json('POST', `/sessions/${session}/messages`, { text: '' }, { ...hub.auth(), 'idempotency-key': `${key}-bad` }),
      );
    // PUT and PATCH twice leave what once leaves; DELETE twice: the second finds nothing.
    const contact = `telegram::${9000 + round}`;
    const put = async () =>
      hub.check('repeat', 'contact PUT', await hub.json('PUT', `/assistant/contacts/${contact}`, { display_name: 'same', tags: ['a', 'b'] }));
    const first = await put();
    const second = await put();
    if (first && second && JSON.stringify({ ...first.json.data, updated_at: 0 }) !== JSON.stringify({ ...second.json.data, updated_at: 0 })) {
      hub.violate('unexpected', `repeat contact ${round}`, `${JSON.stringify(first.json.data)} then ${JSON.stringify(second.json.data)}`);
    }
    const document = (await hub.json('POST', `/knowledge/collections/${real.collection}/documents`, { title: 'twice', text: 'twice' }))!.json.data.id;
    const deletes = [
      await hub.json('DELETE', `/knowledge/collections/${real.collection}/documents/${document}`),
      await hub.json('DELETE', `/knowledge/collections/${real.collection}/documents/${document}`),
    ];
    hub.check('repeat', 'document DELETE', deletes[0]!);
    if (hub.check('repeat', 'document DELETE again', deletes[1]!)?.json?.error?.code !== 'DOCUMENT_NOT_FOUND')
      hub.violate('unexpected', 'repeat DELETE', `second DELETE answered ${deletes[1]?.status}`);
  }
  const sessions = (await hub.json('GET', '/sessions?limit=100'))!.json.data.total as number;
  expect(sessions).toBeGreaterThan(N.repeat);
}, 600_000);

/**
 * The short run's RSS bound is looser here than in the other files: its few hundred cases include
 * bodies up to 1 MiB and 700,000-item arrays, and what the heaps (the main thread's and the worker
 * threads') and the allocator grow to for them, and keep, is a large share of a small baseline (one
 * run: +78 MB RSS, while the main heap after a forced GC was 77 MB against 68 MB). Measured on
 * 2-core machines: 1.22–1.50 alone, 1.60 once in CI beside other jest workers; the full run (9,530
 * cases) settles at 1.11. A hub that kept what it was sent (~1 MiB a case) would be over 3.
 */
const REST_BOUNDS = scaled({ rssRatio: 2 }, {});

it('passes: no crash, no 5xx, no hang, refusals in the envelope, RSS back within 20 % (full run)', async () => {
  await expectRunPassed(hub, rssBaselineKiB, REST_BOUNDS);
  expect(hub.counts['json-shape']).toBeGreaterThanOrEqual(N.shape);
}, 120_000);
