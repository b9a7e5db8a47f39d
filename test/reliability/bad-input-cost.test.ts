import fc from 'fast-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openAiChunk, openAiTextReply, FakeOpenAiServer } from '../fakes/openai-server';
import type { ScriptedReply } from '../fakes/scripted-http-server';
import { assertionXml, authnRequestId, createTestIdp, responseXml, signAssertion, type TestIdp } from '../helpers/saml-idp';
import { removeTempDirs } from '../helpers/temp-dir';
import { scaled } from './scale';
import { startBadInputHub, expectRunPassed, type BadInputHub } from './support/bad-input-hub';
import { draw } from './support/bad-input-values';
import { hostileHtml } from './support/hostile-html';

/**
 * Inputs that cost (issue 26): each class here once blocked the hub's event loop for seconds with a
 * single request — hostile HTML read by http_fetch, quadratic trigger regexes on 64 KiB messages (in
 * turns and the routing test box), forged SAML responses of tens of thousands of elements, deeply
 * nested or huge knowledge uploads. Run against a real hub process; a second process probes
 * `GET /health` every 200 ms, and the longest wait is the figure: a blocked event loop shows there.
 * Pass: every answer in the envelope and of the expected kind, no 5xx, no hang, and the probe's
 * longest wait within COST_BOUNDS (the full run, alone on the machine: 1 s; the short run shares two
 * cores with the rest of `npm test`). Sizes are the hostile ones in both runs; only the counts scale.
 */

const N = scaled({ fetches: 4, regexes: 6, saml: 4, uploads: 4 }, { fetches: 60, regexes: 120, saml: 60, uploads: 60 });
/**
 * The probe's longest wait is the figure. RSS: the hub keeps a collection of megabyte documents and
 * its worker threads' allocations come back to the system slowly, so the bound is the short run's
 * 1.6 in both runs (the full run measured 1.43, and leaks are the other files' business).
 */
const COST_BOUNDS = scaled({ healthWaitMs: 2_500, rssRatio: 1.6 }, { healthWaitMs: 1_000, rssRatio: 1.6 });
const PUBLIC_URL = 'https://hub.example.test';
const ACS_URL = `${PUBLIC_URL}/api/v1/auth/saml/acs`;

let hub: BadInputHub;
let model: FakeOpenAiServer;
let pages: http.Server;
let page = '';
let idp: TestIdp;
let rssBaselineKiB = 0;

beforeAll(async () => {
  model = new FakeOpenAiServer();
  const modelUrl = await model.start();
  pages = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  idp = createTestIdp();
  hub = await startBadInputHub({
    config: [
      'agent:',
      '  default_tools: [http_fetch]',
      'tools:',
      '  http_fetch:',
      '    allow_private: true',
      'auth:',
      '  saml:',
      `    idp_issuer: ${idp.entityId}`,
      'llm:',
      '  max_retries: 0',
    ].join('\n'),
    env: {
      SERVICE_LLM_PROVIDER: 'openai',
      SERVICE_LLM_BASE_URL: modelUrl,
      SERVICE_LLM_MODEL: 'fake-model',
      SERVICE_LLM_API_KEY: 'sk-cost-test',
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      SERVICE_SAML_ENABLED: 'true',
      SERVICE_SAML_ENTRY_POINT: 'https://idp.example.test/sso',
      SERVICE_SAML_IDP_CERT_FILE: idp.certFile,
    },
  });
}, 120_000);

afterAll(async () => {
  await hub?.stop();
  await model?.stop();
  await new Promise((resolve) => pages?.close(resolve));
  removeTempDirs();
});

function toolCall(id: string, name: string, input: Record<string, unknown>): ScriptedReply {
  return {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      openAiChunk.toolCall({ index: 0, id, type: 'function', function: { name, arguments: JSON.stringify(input) } }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.usage(20, 5),
      openAiChunk.done(),
    ],
  };
}

async function newSession(): Promise<string> {
  return (await hub.json('POST', '/sessions', {}))!.json.data.id as string;
}

it('warms up, records the baseline RSS and starts the health probe', async () => {
  model.enqueue(openAiTextReply(['warm']));
  const session = await newSession();
  hub.check('warm-up', 'turn', await hub.json('POST', `/sessions/${session}/messages?sync=true`, { text: 'hello' }));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  rssBaselineKiB = hub.rssKiB();
  hub.startProbe();
});

it('http_fetch reads hostile HTML (up to 1 MiB) in turns', async () => {
  const session = await newSession();
  const url = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/`;
  const fixed = ['<a'.repeat(512 * 1024), '<script>'.repeat(128 * 1024), '<div>'.repeat(200_000)];
  const cases = [...fixed, ...draw(hostileHtml(512 * 1024), N.fetches, 61)];
  for (const [index, html] of cases.entries()) {
    page = html;
    model.enqueue(toolCall(`fetch-${index}`, 'http_fetch', { url }), openAiTextReply(['read it']));
    const answer = hub.check(
      'http-fetch-hostile-html',
      html.slice(0, 40),
      await hub.json('POST', `/sessions/${session}/messages?sync=true`, { text: `read page ${index}` }),
    );
    if (answer && answer.status !== 200) hub.violate('unexpected', `http_fetch ${html.slice(0, 40)}`, `answered ${answer.status}`);
  }
}, 600_000);

/** Patterns of the shapes users write: literals joined by unbounded wildcards and alternations. */
const quadraticPattern = fc
  .array(fc.constantFrom('error', 'timeout', 'a', 'x', '.*', '.+', '\\w+', '\\d+', '(urgent|asap)', '(outage|down)', '\\s*', '[a-z]*', '.{0,40}'), {
    minLength: 2,
    maxLength: 6,
  })
  .map((parts) => parts.join(''));

it('quadratic trigger regexes: saved off the event loop, then 64 KiB messages in the routing test box and in turns', async () => {
  const patterns = draw(fc.array(quadraticPattern, { minLength: 5, maxLength: 50 }), N.regexes, 62);
  for (const [index, regex] of patterns.entries()) {
    const saved = hub.check(
      'regex-save',
      `${regex.length} patterns`,
      await hub.json('POST', '/assistant/workflows', { name: `cost-${index}`, triggers: { regex }, binding_channels: ['web'] }),
    );
    if (saved && saved.status !== 201 && saved.status !== 422) hub.violate('unexpected', `save ${index}`, `answered ${saved.status}`);
    // Built to provoke them: every literal present, then a long run that never completes a match.
    const text = `error urgent asap outage timeout x ${'a'.repeat(64 * 1024 - 64)}`;
    const tested = hub.check('regex-routing-test', `workflow ${index}`, await hub.json('POST', '/assistant/routing/test', { text, channel: 'web' }));
    if (tested && tested.status !== 200) hub.violate('unexpected', `routing test ${index}`, `answered ${tested.status}`);
    model.enqueue(openAiTextReply(['routed']));
    const turn = hub.check('regex-turn', `workflow ${index}`, await hub.json('POST', `/sessions/${await newSession()}/messages?sync=true`, { text }));
    if (turn && turn.status !== 200) hub.violate('unexpected', `turn ${index}`, `answered ${turn.status}`);
  }
}, 600_000);

async function startLogin(): Promise<string> {
  const response = await fetch(`${hub.origin}/api/v1/auth/saml/login`, { redirect: 'manual' });
  return authnRequestId(response.headers.get('location')!);
}

function postSaml(xml: string) {
  return hub.send({
    method: 'POST',
    target: '/api/v1/auth/saml/acs',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64') }).toString(),
  });
}

it('forged SAML responses of many elements or deep nesting are refused, and genuine logins go on', async () => {
  const shapes = draw(fc.record({ siblings: fc.integer({ min: 4_001, max: 40_000 }), depth: fc.integer({ min: 0, max: 2_000 }) }), N.saml, 63);
  let login = 0;
  for (const shape of [{ siblings: 32_000, depth: 0 }, ...shapes]) {
    const options = { email: `cost${(login += 1)}@corp.example.test`, audience: 'switchboard', recipient: ACS_URL, inResponseTo: await startLogin() };
    const filler = shape.depth > 64 ? `${'<x>'.repeat(shape.depth)}${'</x>'.repeat(shape.depth)}` : '<x/>'.repeat(Math.min(shape.siblings, 45_000));
    // Signed by another key: the worker would refuse it anyway, after seconds of work; the bounds refuse it first.
    const forger = createTestIdp(idp.entityId);
    const assertion = signAssertion(
      assertionXml(idp, options).replace('</saml:AttributeStatement>', `${filler}</saml:AttributeStatement>`),
      forger.keyPem,
      forger.certPem,
    );
    const forged = hub.check(
      'saml-forged-size',
      `${shape.siblings} siblings / depth ${shape.depth}`,
      await postSaml(responseXml(idp, assertion, { destination: ACS_URL, inResponseTo: options.inResponseTo })),
    );
    if (forged && forged.status !== 401 && forged.status !== 413)
      hub.violate('unexpected', `forged SAML ${JSON.stringify(shape)}`, `answered ${forged.status}`);
    const genuine = { email: `genuine${login}@corp.example.test`, audience: 'switchboard', recipient: ACS_URL, inResponseTo: await startLogin() };
    const accepted = hub.check(
      'saml-genuine-after',
      genuine.email,
      await postSaml(
        responseXml(idp, signAssertion(assertionXml(idp, genuine), idp.keyPem, idp.certPem), { destination: ACS_URL, inResponseTo: genuine.inResponseTo }),
      ),
    );
    if (accepted && accepted.status !== 200) hub.violate('unexpected', `genuine SAML after ${JSON.stringify(shape)}`, `answered ${accepted.status}`);
  }
}, 600_000);

function upload(collection: string, fileName: string, content: string) {
  const boundary = 'cost-upload-boundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return hub.send({
    method: 'POST',
    target: `/api/v1/knowledge/collections/${collection}/documents`,
    headers: { ...hub.auth(), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  });
}

it('knowledge uploads: hostile and over-deep HTML (422), big text (201)', async () => {
  const collection = (await hub.json('POST', '/knowledge/collections', { name: 'cost' }))!.json.data.id as string;
  const paragraph = 'Rollbacks need the release tag and a green pipeline before anything else happens.';
  const fixed: [string, string][] = [
    ['nested.html', '<div>'.repeat(200_000)],
    ['big.txt', Array.from({ length: 20_000 }, (_, index) => `${paragraph} ${index}`).join('\n\n')],
  ];
  const drawn = draw(hostileHtml(1024 * 1024), N.uploads, 64).map((html, index): [string, string] => [`hostile-${index}.html`, html]);
  for (const [fileName, content] of [...fixed, ...drawn]) {
    const answer = hub.check('upload-cost', fileName, await upload(collection, fileName, content));
    if (answer && answer.status !== 201 && answer.status !== 422) hub.violate('unexpected', `upload ${fileName}`, `answered ${answer.status}`);
  }
}, 600_000);

it(`passes: the health probe never waited over ${COST_BOUNDS.healthWaitMs} ms, no 5xx, no hang, refusals in the envelope`, async () => {
  await expectRunPassed(hub, rssBaselineKiB, { ...COST_BOUNDS, missedProbesFail: false });
}, 180_000);
