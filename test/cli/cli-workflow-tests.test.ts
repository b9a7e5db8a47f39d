import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCli, startHubProcess, type HubProcess } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

const EXAMPLES = path.join(REPO_ROOT, 'workflows');
const junitParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) });
/** No hub, no login: offline runs need neither. */
const OFFLINE_ENV = { SWITCHBOARD_CONFIG_DIR: '/nonexistent/switchboard-config' };

afterAll(() => removeTempDirs());

function examplesCopy(): string {
  const dir = makeTempDir('switchboard-workflow-tests-');
  cpSync(EXAMPLES, dir, { recursive: true });
  return dir;
}

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${from}`);
  writeFileSync(file, text.replace(from, to));
}

/** A workflow pinning write_file (asks for a confirmation) and current_time, for turn cases. */
function filesWorkflowDir(cases: string): string {
  const dir = makeTempDir('switchboard-workflow-tests-');
  writeFileSync(
    path.join(dir, 'notes.yaml'),
    // A linked collection the test hub has no copy of: it exists there, empty.
    'name: notes\ntool_list: write_file, current_time\nknowledge_base_ids: [runbooks]\nbinding_channels: [web]\ntriggers:\n  keywords: [save]\nsystem_prompt: Save notes.\n',
  );
  // Bound to one Slack channel and one Telegram chat only: cases on them run in sessions that route as that channel.
  writeFileSync(
    path.join(dir, 'ops.yaml'),
    'name: ops\ntool_list: current_time\nbinding_channels: [slack:COPS, telegram:-42]\ntriggers:\n  keywords: [outage]\nsystem_prompt: Ops.\n',
  );
  mkdirSync(path.join(dir, 'tests'));
  writeFileSync(path.join(dir, 'tests', 'notes.yaml'), cases);
  return dir;
}

const WRITE = '{tool: write_file, input: {path: note.txt, content: hello}}';

describe('switchboard workflows test (offline)', () => {
  it('passes the shipped examples: one line per case, the matrix, a summary, JUnit XML that parses', async () => {
    const junit = path.join(makeTempDir(), 'results.xml');
    const run = await runCli(['workflows', 'test', '--junit', junit], OFFLINE_ENV);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('✓ workflows/tests/oncall-runbook.yaml › oncall answers with a rollback plan');
    expect(run.stdout).toMatch(/^13 case\(s\): 13 passed, 0 failed \(\d+ ms\)$/m);
    expect(run.stdout).toMatch(/^support-triage +· +· +4 +·$/m);
    expect(run.stdout).not.toMatch(/\d!/);
    const xml = readFileSync(junit, 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const { testsuites } = junitParser.parse(xml);
    expect(testsuites).toMatchObject({ tests: '13', failures: '0' });
    expect(testsuites.testsuite).toHaveLength(3);
  });

  it('fails a routing case when another workflow takes an overlapping keyword, and the matrix shows where it went', async () => {
    const dir = examplesCopy();
    edit(path.join(dir, 'sales-faq.yaml'), '    - enterprise\n', '    - enterprise\n    - error\n');
    const junit = path.join(dir, 'results.xml');
    const run = await runCli(['workflows', 'test', '--workflows', dir, '--junit', junit], OFFLINE_ENV);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('✗ ' + path.join(dir, 'tests', 'support-triage.yaml') + ' › an error message goes to support');
    expect(run.stdout).toContain('routed to "sales-faq" (trigger), expected "support-triage": scores: sales-faq 1 (error), support-triage 1 (error)');
    expect(run.stdout).toMatch(/^support-triage +· +1! +3 +·$/m);
    expect(run.stdout).toContain('13 case(s): 12 passed, 1 failed');
    const { testsuites } = junitParser.parse(readFileSync(junit, 'utf8'));
    const failures = testsuites.testsuite.flatMap((suite: { testcase: { failure?: { message: string } }[] }) =>
      suite.testcase.flatMap((entry) => entry.failure ?? []),
    );
    expect(failures).toHaveLength(1);
    expect(failures[0].message).toContain('routed to "sales-faq"');
  });

  it('fails a case whose expected workflow does not exist, naming it', async () => {
    const dir = filesWorkflowDir('- {name: ghost, message: save this, expect: {workflow: no-such-flow}}\n');
    const run = await runCli(['workflows', 'test', '--workflows', dir], OFFLINE_ENV);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('expected workflow "no-such-flow" does not exist (workflows: notes, ops)');
  });

  it('refuses invalid test files naming file, case and field, and runs nothing', async () => {
    const dir = filesWorkflowDir('- {name: typo, message: save, expect: {workflow: notes, tool: [write_file]}}\n');
    const run = await runCli(['workflows', 'test', '--workflows', dir], OFFLINE_ENV);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`✗ ${path.join(dir, 'tests', 'notes.yaml')}: case 1 "typo": expect: unknown field "tool"`);
    expect(run.stdout).toBe('');
  });

  it('answers confirmations as the case says, fails on an unanswered one and on a tool the workflow does not pin', async () => {
    const dir = filesWorkflowDir(
      [
        `- {name: allowed, message: save this, model: [${WRITE}, {say: Saved.}], expect: {workflow: notes, confirm: allow, tools: [write_file], reply_contains: [Saved.]}}`,
        `- {name: denied, message: save this, model: [${WRITE}, {say: Not saved.}], expect: {workflow: notes, confirm: deny, tools: []}}`,
        `- {name: unanswered, message: save this, model: [${WRITE}, {say: Hm.}], expect: {workflow: notes}}`,
        `- {name: unpinned, message: save this, model: [{tool: calculator, input: {expression: 1+1}}, {say: "2"}], expect: {workflow: notes, tools: [calculator]}}`,
        `- {name: slack channel, message: an outage, channel: "slack:COPS", model: [{say: On it.}], expect: {workflow: ops, reason: trigger}}`,
        `- {name: telegram chat, message: an outage, channel: "telegram:-42", model: [{say: On it.}], expect: {workflow: ops}}`,
        `- {name: other slack channel, message: an outage, channel: slack, model: [{say: Hm.}], expect: {workflow: null}}`,
      ].join('\n'),
    );
    const run = await runCli(['workflows', 'test', '--workflows', dir], OFFLINE_ENV);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/✓ .* › allowed/);
    expect(run.stdout).toMatch(/✓ .* › denied/);
    expect(run.stdout).toContain('a confirmation was asked for write_file and the case gives no expect.confirm (denied)');
    expect(run.stdout).toContain('tools ran [], expected [calculator] (not run: calculator: ');
    expect(run.stdout).toMatch(/✓ .* › slack channel/);
    expect(run.stdout).toMatch(/✓ .* › telegram chat/);
    expect(run.stdout).toMatch(/✓ .* › other slack channel/);
    expect(run.stdout).toContain('7 case(s): 5 passed, 2 failed');
  });

  it('--model record keeps the configured model’s answers; replay plays them without it', async () => {
    // The configured model here is the built-in offline one: deterministic, it calls current_time when asked the time.
    const dir = filesWorkflowDir(
      '- {name: time, message: "save: what time is it?", model: [{say: unused}], expect: {workflow: notes, tools: [current_time]}}\n',
    );
    const tape = path.join(dir, 'tape.json');
    const recorded = await runCli(['workflows', 'test', '--workflows', dir, '--model', 'record', tape], OFFLINE_ENV);
    expect(recorded.stdout).toContain('1 passed');
    const saved = JSON.parse(readFileSync(tape, 'utf8'));
    expect(Object.keys(saved.cases)).toEqual([`${path.join(dir, 'tests', 'notes.yaml')}#time`]);
    const replayed = await runCli(['workflows', 'test', '--workflows', dir, '--model', 'replay', tape], OFFLINE_ENV);
    expect(replayed.stdout).toContain('the model replayed from');
    expect(replayed.stdout).toContain('1 passed');
    const missing = await runCli(['workflows', 'test', '--workflows', dir, '--model', 'replay', path.join(dir, 'none.json')], OFFLINE_ENV);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such recording');
  });
});

describe('with a hub', () => {
  let hub: HubProcess;
  let token: string;
  let apiKey: string;

  beforeAll(async () => {
    hub = await startHubProcess();
    token = (await registerUser(hub.api, 'tests_admin')).token;
    const key = await request(`${hub.api}/auth/api-keys`, jsonBody({ label: 'ci' }, { authorization: `Bearer ${token}` }));
    apiKey = key.body.data.key;
    // The collection the test workflow links.
    expect((await request(`${hub.api}/knowledge/collections`, jsonBody({ name: 'runbooks' }, { authorization: `Bearer ${token}` }))).status).toBe(201);
  });

  afterAll(() => hub.stop());

  async function hubWorkflows(): Promise<string[]> {
    const list = await request(`${hub.api}/assistant/workflows?limit=100`, { headers: { authorization: `Bearer ${token}` } });
    return list.body.data.items.map((item: { name: string }) => item.name).sort();
  }

  it('sync --test refuses to sync when a case fails, and syncs when they pass', async () => {
    const dir = examplesCopy();
    edit(path.join(dir, 'sales-faq.yaml'), '    - enterprise\n', '    - enterprise\n    - error\n');
    const env = { SWITCHBOARD_API_KEY: apiKey, SWITCHBOARD_CONFIG_DIR: makeTempDir() };
    const refused = await runCli(['workflows', 'sync', dir, '--test', '--url', hub.url], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The workflow tests failed: nothing was synced.');
    expect(await hubWorkflows()).toEqual([]);
    edit(path.join(dir, 'sales-faq.yaml'), '    - error\n', '');
    const synced = await runCli(['workflows', 'sync', dir, '--test', '--url', hub.url], env);
    expect(synced.stderr).toBe('');
    expect(synced.code).toBe(0);
    expect(synced.stdout).toContain('13 passed, 0 failed');
    expect(await hubWorkflows()).toEqual(['oncall-runbook', 'sales-faq', 'support-triage']);
  });

  it('--against runs routing cases through the routing test endpoint and whole cases in a session with the hub’s model', async () => {
    await request(`${hub.api}/assistant/workflows/sync`, jsonBody({ workflows: [], prune: true }, { authorization: `Bearer ${token}` }));
    const dir = filesWorkflowDir(
      [
        '- {name: routed, message: save my notes, expect: {workflow: notes, reason: trigger}}',
        '- {name: elsewhere, message: hello, expect: {workflow: notes}}',
        // The hub's built-in model calls current_time when asked the time.
        '- {name: whole, message: "save: what time is it?", model: [{say: ignored}], expect: {workflow: notes, tools: [current_time]}}',
        // Its write_file asks for a confirmation: answered over REST as the case says.
        '- {name: confirmed, message: "save a file notes.txt containing hello", model: [{say: ignored}], expect: {workflow: notes, confirm: allow, tools: [write_file]}}',
      ].join('\n'),
    );
    const env = { SWITCHBOARD_API_KEY: apiKey, SWITCHBOARD_CONFIG_DIR: makeTempDir() };
    expect((await runCli(['workflows', 'sync', dir, '--url', hub.url], env)).code).toBe(0);
    const run = await runCli(['workflows', 'test', '--workflows', dir, '--against', hub.url], env);
    expect(run.stdout).toContain(`Running 4 case(s) against ${hub.url}`);
    expect(run.stdout).toMatch(/✓ .* › routed/);
    expect(run.stdout).toMatch(/✗ .* › elsewhere \(\d+ ms\)\n {4}routed to the default \(default\), expected "notes": /);
    expect(run.stdout).toMatch(/✓ .* › whole/);
    expect(run.stdout).toMatch(/✓ .* › confirmed/);
    expect(run.stdout).toContain('4 case(s): 3 passed, 1 failed');
    expect(run.code).toBe(1);
  });
});
