import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parseCaseFile } from '../../src/workflows/testing/case-files';
import type { TestCase } from '../../src/workflows/testing/case-schema';
import { junitXml } from '../../src/workflows/testing/junit';
import { confusionMatrix, matrixLines } from '../../src/workflows/testing/report';
import { routingFailures, turnFailures, type CaseResult } from '../../src/workflows/testing/runner';

const FILE = 'workflows/tests/x.yaml';

function oneCase(yaml: string): TestCase {
  const { cases, problems } = parseCaseFile(yaml, FILE);
  expect(problems).toEqual([]);
  return cases[0]!;
}

describe('test files', () => {
  it('reads the issue’s shape with its defaults (channel web, no tags)', () => {
    const parsed = oneCase(`
- name: oncall answers with a rollback plan
  message: "sev1: checkout latency after the 14:02 deploy"
  model:
    - tool: current_time
    - say: "Roll back the 14:02 deploy first."
  expect:
    workflow: oncall-runbook
    tools: [current_time]
    confirm: allow
    reply_contains: ["Roll back"]
`);
    expect(parsed).toMatchObject({ channel: 'web', contact_tags: [], index: 1, id: `${FILE}#oncall answers with a rollback plan` });
    expect(parsed.model).toEqual([{ tool: 'current_time' }, { say: 'Roll back the 14:02 deploy first.' }]);
    expect(oneCase('- {name: n, message: m, expect: {workflow: null}}').expect.workflow).toBeNull();
  });

  it.each([
    ['- {name: a, message: m, expect: {workflow: x, reasn: trigger}}', `${FILE}: case 1 "a": expect: unknown field "reasn"`],
    ['- {name: a, message: m, expect: {workflow: x, reason: because}}', `${FILE}: case 1 "a": expect.reason: `],
    ['- {name: a, message: "", expect: {workflow: x}}', `${FILE}: case 1 "a": message: `],
    ['- {name: a, message: m}', `${FILE}: case 1 "a": expect: `],
    ['- {name: a, message: m, channel: "Slack!", expect: {workflow: x}}', `${FILE}: case 1 "a": channel: `],
    ['- {name: a, message: m, expect: {workflow: x, tools: [calculator]}}', `${FILE}: case 1 "a": expect.tools: needs a \`model\` script`],
    [
      '- {name: a, message: m, model: [{sing: la}], expect: {workflow: x}}',
      `${FILE}: case 1 "a": model.0: a step is {tool: <name>, input?: {...}} or {say: <text>}`,
    ],
    ['- {message: m, expect: {workflow: x}}', `${FILE}: case 1: name: `],
    ['- {name: a, message: m, expect: {workflow: x}}\n- {name: a, message: m, expect: {workflow: x}}', `${FILE}: case 2 "a": name: another case`],
    ['name: a\nmessage: m', `${FILE}: not a test file: it must hold a list of cases`],
    ['- name: a\n  name: b', `${FILE}:2: invalid YAML`],
  ])('%j is refused naming file, case and field', (yaml, expected) => {
    const { problems } = parseCaseFile(yaml, FILE);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toContain(expected);
  });

  it('reports every bad case of a file, not only the first', () => {
    const { cases, problems } = parseCaseFile('- {name: a, message: m, expect: {}}\n- {name: b, message: m, expect: {workflow: ok}}\n- {name: c}', FILE);
    expect(cases.map((entry) => entry.name)).toEqual(['b']);
    expect(problems.map((problem) => problem.split(':')[1])).toEqual([' case 1 "a"', ' case 3 "c"', ' case 3 "c"']);
  });
});

function result(testCase: TestCase, picked: string | null, failures: string[] = []): CaseResult {
  return { testCase, routing: { workflow: picked, reason: picked ? 'trigger' : 'default' }, turn: null, failures, durationMs: 12 };
}

describe('comparing', () => {
  const routed = oneCase('- {name: r, message: m, expect: {workflow: support, reason: trigger}}');
  const whole = oneCase('- {name: w, message: m, model: [{say: hi}], expect: {workflow: sales, tools: [calculator], reply_contains: [Total]}}');

  it('names what routing picked and why', () => {
    expect(routingFailures(routed, { workflow: 'support', reason: 'trigger' })).toEqual([]);
    expect(routingFailures(routed, { workflow: 'sales', reason: 'trigger', rule: 'scores: sales 1, support 1' })).toEqual([
      'routed to "sales" (trigger), expected "support": scores: sales 1, support 1',
    ]);
    expect(routingFailures(routed, { workflow: 'support', reason: 'contact' })).toEqual(['routed to "support" by contact, expected by trigger']);
  });

  it('checks the tools that ran, in order, and says why others did not', () => {
    const turn = { ending: 'done', workflow: 'sales', reason: 'trigger', confirmations: [], reply: 'Total: 3' };
    expect(turnFailures(whole, { ...turn, tools: [{ name: 'calculator', error: null }] })).toEqual([]);
    expect(turnFailures(whole, { ...turn, tools: [{ name: 'calculator', error: 'There is no tool "calculator" in this session.' }] })).toEqual([
      'tools ran [], expected [calculator] (not run: calculator: There is no tool "calculator" in this session.)',
    ]);
    expect(turnFailures(whole, { ...turn, tools: [{ name: 'calculator', error: null }], reply: 'nothing' })).toEqual([
      'the reply does not contain "Total": "nothing"',
    ]);
  });

  it('takes a cancelled turn as the ending a `confirm: cancel` case asks for, and no other', () => {
    const cancelling = oneCase('- {name: c, message: m, model: [{tool: write_file}], expect: {workflow: sales, confirm: cancel, tools: []}}');
    const turn = {
      ending: 'cancelled',
      workflow: null,
      reason: null,
      confirmations: ['write_file'],
      reply: '',
      tools: [{ name: 'write_file', error: 'cancelled' }],
    };
    expect(turnFailures(cancelling, turn)).toEqual([]);
    expect(turnFailures(whole, { ...turn, ending: 'cancelled' })[0]).toBe('the turn ended with cancelled');
  });
});

describe('reports', () => {
  const toSupport = oneCase('- {name: "a <b> & \\"c\\"", message: m, expect: {workflow: support}}');
  const toDefault = oneCase('- {name: d, message: m, expect: {workflow: null}}');

  it('draws the confusion matrix: expected × picked, misroutes marked', () => {
    const lines = matrixLines(confusionMatrix([result(toSupport, 'sales', ['routed to "sales"']), result(toSupport, 'support'), result(toDefault, null)]));
    expect(lines.slice(1)).toEqual([
      'expected \\ picked  sales  support  (default)',
      'support               1!        1          ·',
      '(default)              ·        ·          1',
    ]);
  });

  it('writes JUnit XML an XML parser reads, one testsuite per file, failures with their text', () => {
    const failing = { ...toSupport, file: 'tests/a&b.yaml' };
    const xml = junitXml([result(failing, 'sales', ['routed to "sales" <x>\u0001']), result(toDefault, null)]);
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => ['testsuite', 'testcase'].includes(name) }).parse(xml);
    const root = parsed.testsuites;
    expect(root).toMatchObject({ tests: '2', failures: '1' });
    expect(root.testsuite.map((suite: { name: string }) => suite.name)).toEqual(['tests/a&b.yaml', FILE]);
    const [first, second] = root.testsuite.flatMap((suite: { testcase: unknown[] }) => suite.testcase);
    expect(first.name).toBe('a <b> & "c"');
    expect(first.time).toBe('0.012');
    expect(first.failure.message).toBe('routed to "sales" <x>\uFFFD');
    expect(first.failure['#text']).toBe('routed to "sales" <x>\uFFFD');
    expect(second.failure).toBeUndefined();
  });
});
