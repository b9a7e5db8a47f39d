import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { workflowInputSchema, toolNames } from '../../src/workflows/workflow-schema';
import { parseWorkflowYaml } from '../../src/workflows/yaml';
import { startAuthService, type AuthService } from '../helpers/auth-service';
import { jsonBody, request } from '../helpers/http';
import { REPO_ROOT } from '../helpers/process';
import { removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';
import { registry } from '../agent/tools/tool-harness';

const dir = path.join(REPO_ROOT, 'workflows');
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.yaml'))
  .sort();
const workflows = files.map((name) => ({ name, workflow: parseWorkflowYaml(readFileSync(path.join(dir, name), 'utf8'), name) }));

describe('the example workflows shipped in workflows/', () => {
  it('include support triage, an on-call runbook helper and a sales FAQ', () => {
    expect(files).toEqual(expect.arrayContaining(['support-triage.yaml', 'oncall-runbook.yaml', 'sales-faq.yaml']));
  });

  it.each(files)('%s is a valid workflow with real tools, triggers and channels', (name) => {
    const { workflow } = workflows.find((entry) => entry.name === name)!;
    const parsed = workflowInputSchema.safeParse(workflow);
    expect(parsed.error?.issues ?? []).toEqual([]);
    const input = parsed.data!;
    const tools = registry();
    const pinned = toolNames(input.tool_list);
    expect(pinned.length).toBeGreaterThan(0);
    expect(pinned.filter((tool) => !tools.get(tool))).toEqual([]);
    expect(input.system_prompt.length).toBeGreaterThan(200);
    expect(input.triggers.keywords.length).toBeGreaterThan(0);
    expect(input.triggers.regex.length).toBeGreaterThan(0);
    expect(input.triggers.contact_tags.length).toBeGreaterThan(0);
    expect(input.binding_channels.length).toBeGreaterThan(0);
    // A fresh hub has no knowledge collections, so a reference would be refused there.
    expect(input.knowledge_base_ids).toEqual([]);
  });

  it.each([
    ['support-triage', 'Ticket SUP-1234 is still open'],
    ['oncall-runbook', 'we have a sev1 on checkout'],
    ['sales-faq', 'What would 25 seats cost per year?'],
  ])('the regex of %s matches a realistic message and not small talk', (name, message) => {
    const { workflow } = workflows.find((entry) => entry.workflow.name === name)!;
    // Compiled as the router and the regex-safety check compile them.
    const patterns = (workflow.triggers as { regex: string[] }).regex.map((pattern) => new RegExp(pattern, 'iu'));
    expect(patterns.some((pattern) => pattern.test(message))).toBe(true);
    expect(patterns.some((pattern) => pattern.test('Good morning! How was your weekend?'))).toBe(false);
  });

  describe('synced into a real hub', () => {
    let hub: AuthService;
    let token: string;

    beforeAll(async () => {
      hub = await startAuthService();
      token = (await registerUser(hub.api, 'examples_admin')).token;
    });

    afterAll(async () => {
      await hub.close();
      removeTempDirs();
    });

    it('are all created with no errors, and are unchanged the second time', async () => {
      const body = { workflows: workflows.map((entry) => entry.workflow) };
      const first = await request(`${hub.api}/assistant/workflows/sync`, jsonBody(body, { authorization: `Bearer ${token}` }));
      expect(first.status).toBe(200);
      expect(first.body.data.errors).toEqual([]);
      expect([...first.body.data.created].sort()).toEqual(workflows.map((entry) => entry.workflow.name).sort());
      const second = await request(`${hub.api}/assistant/workflows/sync`, jsonBody(body, { authorization: `Bearer ${token}` }));
      expect(second.body.data.created).toEqual([]);
      expect(second.body.data.updated).toEqual([]);
      expect(second.body.data.unchanged).toHaveLength(workflows.length);
    });
  });
});
