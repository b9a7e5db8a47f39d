import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { runCli, startHubProcess, type HubProcess } from '../helpers/cli';
import { jsonBody, request } from '../helpers/http';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { registerUser } from '../helpers/users';

const EXAMPLES = path.join(REPO_ROOT, 'workflows');
const EXAMPLE_NAMES = ['oncall-runbook', 'sales-faq', 'support-triage'];

let hub: HubProcess;
let token: string;
/** A logged-in CLI configuration, shared by these scenarios (login itself is tested in cli-auth). */
let env: Record<string, string>;

beforeAll(async () => {
  hub = await startHubProcess();
  token = (await registerUser(hub.api, 'cli_admin')).token;
  env = { SWITCHBOARD_CONFIG_DIR: makeTempDir('switchboard-cli-config-'), SWITCHBOARD_URL: hub.url };
  const login = await runCli(['login', '--username', 'cli_admin', '--password', 'pw-cli_admin-long-enough'], env);
  if (login.code !== 0) throw new Error(`login failed: ${login.stderr}`);
});

afterAll(async () => {
  await hub.stop();
  removeTempDirs();
});

/** Puts the hub back to no workflows at all, through the API (not the CLI under test). */
async function resetHub(): Promise<void> {
  const reset = await request(`${hub.api}/assistant/workflows/sync`, jsonBody({ workflows: [], prune: true }, { authorization: `Bearer ${token}` }));
  expect(reset.status).toBe(200);
}

async function hubWorkflows(): Promise<Record<string, any>[]> {
  const list = await request(`${hub.api}/assistant/workflows?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  return list.body.data.items;
}

/** A temp copy of the shipped examples. */
function examplesCopy(): string {
  const dir = makeTempDir('switchboard-workflows-');
  cpSync(EXAMPLES, dir, { recursive: true });
  return dir;
}

function edit(file: string, from: string | RegExp, to: string): void {
  const text = readFileSync(file, 'utf8');
  const changed = text.replace(from, to);
  if (changed === text) throw new Error(`edit of ${file} changed nothing`);
  writeFileSync(file, changed);
}

describe('switchboard workflows sync', () => {
  beforeAll(resetHub);

  it('--dry-run prints the plan and creates nothing (exit 0)', async () => {
    const run = await runCli(['workflows', 'sync', EXAMPLES, '--dry-run'], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    for (const name of EXAMPLE_NAMES) expect(run.stdout).toContain(`+ ${name} (would be created)`);
    expect(run.stdout).toContain('Dry run (nothing changed): 3 created, 0 changed, 0 deleted, 0 unchanged.');
    expect(await hubWorkflows()).toEqual([]);
  });

  it('creates the workflows, then finds them all unchanged the second time (exit 0 both)', async () => {
    const first = await runCli(['workflows', 'sync', EXAMPLES], env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    for (const name of EXAMPLE_NAMES) expect(first.stdout).toContain(`+ ${name} (created)`);
    expect((await hubWorkflows()).map((workflow) => workflow.name).sort()).toEqual(EXAMPLE_NAMES);

    const second = await runCli(['workflows', 'sync', EXAMPLES], env);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toContain('= 3 unchanged');
    expect(second.stdout).not.toMatch(/^[+~-] /m);
  });

  it('export → sync is a no-op, and the exported files are the shipped ones byte for byte', async () => {
    const exported = path.join(makeTempDir(), 'exported');
    const run = await runCli(['workflows', 'export', exported], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(exported).sort()).toEqual(EXAMPLE_NAMES.map((name) => `${name}.yaml`));
    for (const name of EXAMPLE_NAMES) {
      expect(readFileSync(path.join(exported, `${name}.yaml`), 'utf8')).toBe(readFileSync(path.join(EXAMPLES, `${name}.yaml`), 'utf8'));
    }
    const before = await hubWorkflows();
    const sync = await runCli(['workflows', 'sync', exported, '--prune'], env);
    expect(sync).toMatchObject({ code: 0, stderr: '' });
    expect(sync.stdout).toContain('Synced: 0 created, 0 changed, 0 deleted, 3 unchanged.');
    // Not even a timestamp moved.
    expect(await hubWorkflows()).toEqual(before);
  });

  it('diff lists the changed fields of an edited file and changes nothing', async () => {
    const dir = examplesCopy();
    edit(path.join(dir, 'sales-faq.yaml'), 'tool_list: calculator, current_time', 'tool_list: calculator');
    edit(path.join(dir, 'sales-faq.yaml'), '    - pricing\n', '    - pricing\n    - quote\n');
    edit(path.join(dir, 'oncall-runbook.yaml'), 'You help the engineer', 'You assist the engineer');
    const run = await runCli(['workflows', 'diff', dir], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('~ sales-faq: tool_list, triggers');
    expect(run.stdout).toContain('~ oncall-runbook: system_prompt');
    expect(run.stdout).toContain('= 1 unchanged');
    const salesFaq = (await hubWorkflows()).find((workflow) => workflow.name === 'sales-faq')!;
    expect(salesFaq.tool_list).toBe('calculator, current_time');
  });

  it('diff shows workflows missing from the directory as deleted only with --prune, and deletes nothing', async () => {
    const dir = examplesCopy();
    rmSync(path.join(dir, 'oncall-runbook.yaml'));
    const run = await runCli(['workflows', 'diff', dir], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('- oncall-runbook (would be deleted with --prune)');
    expect((await hubWorkflows()).map((workflow) => workflow.name)).toContain('oncall-runbook');
  });

  it('--prune deletes the workflows that have no file; without it they stay', async () => {
    const dir = examplesCopy();
    rmSync(path.join(dir, 'oncall-runbook.yaml'));
    const withoutPrune = await runCli(['workflows', 'sync', dir], env);
    expect(withoutPrune.code).toBe(0);
    expect(withoutPrune.stdout).not.toContain('oncall-runbook');
    expect((await hubWorkflows()).map((workflow) => workflow.name)).toContain('oncall-runbook');

    const dryRun = await runCli(['workflows', 'sync', dir, '--prune', '--dry-run'], env);
    expect(dryRun.stdout).toContain('- oncall-runbook (would be deleted)');
    expect((await hubWorkflows()).map((workflow) => workflow.name)).toContain('oncall-runbook');

    const pruned = await runCli(['workflows', 'sync', dir, '--prune'], env);
    expect(pruned).toMatchObject({ code: 0, stderr: '' });
    expect(pruned.stdout).toContain('- oncall-runbook (deleted)');
    expect((await hubWorkflows()).map((workflow) => workflow.name).sort()).toEqual(['sales-faq', 'support-triage']);
  });
});

describe('switchboard workflows export', () => {
  beforeAll(resetHub);

  it('follows every page of the list (more workflows than one page holds)', async () => {
    const many = Array.from({ length: 105 }, (_, index) => ({ name: `bulk-${String(index).padStart(3, '0')}`, system_prompt: `Workflow number ${index}.\n` }));
    const created = await request(`${hub.api}/assistant/workflows/sync`, jsonBody({ workflows: many }, { authorization: `Bearer ${token}` }));
    expect(created.body.data.created).toHaveLength(105);
    const dir = makeTempDir();
    const run = await runCli(['workflows', 'export', dir], env);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Exported 105 workflow\(s\) to /);
    expect(readdirSync(dir)).toHaveLength(105);
    expect(readFileSync(path.join(dir, 'bulk-104.yaml'), 'utf8')).toContain('system_prompt: |\n  Workflow number 104.\n');
    const again = await runCli(['workflows', 'sync', dir, '--prune', '--dry-run'], env);
    expect(again.stdout).toContain('= 105 unchanged');
  });
});

describe('switchboard workflows sync warnings', () => {
  beforeAll(resetHub);

  it('prints a warning for a workflow that can never be picked, on stderr, and still exits 0', async () => {
    const dir = makeTempDir('switchboard-workflows-');
    writeFileSync(path.join(dir, 'lonely.yaml'), 'name: lonely\nsystem_prompt: You are alone.\nbinding_channels:\n  - web\n');
    const run = await runCli(['workflows', 'sync', dir], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('+ lonely (created)');
    expect(run.stderr).toMatch(
      /^! lonely: No triggers \(keywords, regex, contact_tags\): the router never picks it; .* Add triggers, or set default: true\.\n$/,
    );
  });
});

describe('switchboard workflows export from a hub that sends hostile names', () => {
  it('writes only names of the workflow pattern: `../x` and absolute paths are refused, nothing outside <dir>', async () => {
    // Not our hub: a server answering the list with names no hub accepts.
    const names = ['fine', '../escaped', '/tmp/absolute-escape', 'a/b', '..'];
    const fake = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const items = names.map((name) => ({
        name,
        description: '',
        system_prompt: 'x',
        tool_list: '',
        knowledge_base_ids: [],
        triggers: { keywords: [], regex: [], contact_tags: [] },
        binding_channels: [],
        mid_turn: null,
      }));
      response.end(
        JSON.stringify({
          data: { items, next_cursor: null, has_more: false, total: items.length },
          error: null,
          meta: { request_id: 'x', timestamp: new Date().toISOString() },
        }),
      );
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const parent = makeTempDir();
      const dir = path.join(parent, 'out');
      const run = await runCli(
        ['workflows', 'export', dir, '--url', `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, '--api-key', `svc_live_${'a'.repeat(43)}`],
        env,
      );
      expect(run.code).toBe(1);
      expect(readdirSync(dir)).toEqual(['fine.yaml']);
      expect(readdirSync(parent)).toEqual(['out']);
      expect(existsSync('/tmp/absolute-escape.yaml')).toBe(false);
      expect(run.stderr).toContain('not written: "../escaped" is not a workflow name');
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});

describe('refusals (exit 1, file and field named, nothing applied)', () => {
  beforeEach(resetHub);

  it('an unsafe regex names the file and triggers.regex.<n>; the valid files are not applied either', async () => {
    const dir = examplesCopy();
    edit(path.join(dir, 'support-triage.yaml'), '  regex:\n', '  regex:\n    - (a+)+$\n');
    const run = await runCli(['workflows', 'sync', dir], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^✗ ${escape(path.join(dir, 'support-triage.yaml'))}: triggers\\.regex\\.0: Refused: .*backtracking`, 'm'));
    expect(run.stdout).toContain('1 workflow(s) refused; nothing was changed');
    expect(await hubWorkflows()).toEqual([]);
  });

  it('an unknown tool names the file and tool_list', async () => {
    const dir = examplesCopy();
    edit(path.join(dir, 'sales-faq.yaml'), 'tool_list: calculator, current_time', 'tool_list: calculator, teleport');
    const run = await runCli(['workflows', 'sync', dir, '--dry-run'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`✗ ${path.join(dir, 'sales-faq.yaml')}: tool_list: No such tool: teleport.`);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a missing name and an unknown field are named per file, even when two files are wrong', async () => {
    const dir = examplesCopy();
    writeFileSync(path.join(dir, 'anonymous.yaml'), 'description: no name here\n');
    edit(path.join(dir, 'oncall-runbook.yaml'), 'system_prompt:', 'system_promt: typo\nsystem_prompt:');
    const run = await runCli(['workflows', 'diff', dir], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`✗ ${path.join(dir, 'anonymous.yaml')}: name:`);
    expect(run.stderr).toMatch(new RegExp(`✗ ${escape(path.join(dir, 'oncall-runbook.yaml'))}: .*system_promt`));
  });

  it('broken YAML names the file and the line, and nothing is sent to the hub', async () => {
    const dir = examplesCopy();
    writeFileSync(path.join(dir, 'broken.yaml'), 'name: broken\ntriggers:\n  keywords: [help, sos\nsystem_prompt: hi\n');
    const run = await runCli(['workflows', 'sync', dir, '--prune'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^✗ ${escape(path.join(dir, 'broken.yaml'))}:4: invalid YAML: `, 'm'));
    expect(run.stderr).toContain('nothing was sent to the hub');
    expect(run.stdout).toBe('');
    expect(await hubWorkflows()).toEqual([]);
  });

  it('a file that is not a mapping is refused with its name', async () => {
    const dir = makeTempDir();
    writeFileSync(path.join(dir, 'list.yml'), '- name: a\n- name: b\n');
    const run = await runCli(['workflows', 'sync', dir], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`✗ ${path.join(dir, 'list.yml')}:1: not a workflow`);
  });
});

describe('usage errors (exit 2)', () => {
  it.each([
    ['a missing directory argument', ['workflows', 'sync'], /missing required argument 'dir'/],
    ['an unknown command', ['workflow', 'sync', '.'], /unknown command/],
    ['an unknown option', ['workflows', 'sync', '.', '--force'], /unknown option '--force'/],
    ['a directory that does not exist', ['workflows', 'diff', '/nonexistent/switchboard-workflows'], /No such directory: \/nonexistent\/switchboard-workflows/],
    ['a URL that is not one', ['workflows', 'export', '.', '--url', 'localhost:8000'], /Not an http\(s\) URL/],
  ])('%s', async (_label, args, message) => {
    const run = await runCli(args, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it('--help exits 0', async () => {
    const run = await runCli(['workflows', 'sync', '--help'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--prune');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
