import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CHANNELS } from '../../adapters';
import { loadConfig } from '../../src/config';
import { parseCaseFile } from '../../src/workflows/testing/case-files';
import { TEST_JWT_SECRET, testEnv } from '../helpers/env';
import { EXTRA_INSTALL_TIMEOUT_MS, ensureExtra } from '../helpers/extras';
import { REPO_ROOT, readyUrl, spawnService, type ServiceProcess } from '../helpers/process';
import { createTestIdp } from '../helpers/saml-idp';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { parseSamplePage, samplePageFiles, type Sample, type SamplePage } from './samples';

/**
 * Every code sample of the documentation site's guides still works: the shell samples run, in page
 * order, against a real hub (the built `node dist/src/main.js`, fresh per page); config fragments
 * load; workflow files are accepted by a hub; the CI job's steps run. Samples that cannot run here
 * must say why with their marker (see samples.ts).
 */

const pages = samplePageFiles().map(parseSamplePage);
const ADMIN = { username: 'ada', email: 'ada@example.com', password: 'correct horse battery' };
const hubs: ServiceProcess[] = [];

// The webchat guide's demo page needs the widget package, which the default install leaves out: the
// guide has the reader run `npm run extras:install`; this does the same before any hub starts.
beforeAll(() => ensureExtra('webchat-widget'), EXTRA_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  for (const hub of hubs) {
    hub.child.kill('SIGTERM');
    await hub.exited;
  }
  removeTempDirs();
});

async function post(url: string, body: unknown, token?: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const envelope = (await response.json()) as { data: any; error: unknown };
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${JSON.stringify(envelope.error)}`);
  return envelope.data;
}

/** A page's working directory: the repository's workflows/ and node_modules, a `switchboard` command, a data dir. */
function pageDirectory(): { dir: string; bin: string } {
  const dir = makeTempDir('switchboard-docs-page-');
  cpSync(path.join(REPO_ROOT, 'workflows'), path.join(dir, 'workflows'), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const bin = path.join(dir, '.bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'switchboard'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(REPO_ROOT, 'dist/src/compose/cli.js')}" "$@"\n`);
  chmodSync(path.join(bin, 'switchboard'), 0o755);
  return { dir, bin };
}

/** Starts a hub for one page, configured by the page's `sample-hub` markers. */
async function startHub(page: SamplePage, dir: string): Promise<string> {
  const extra: Record<string, string> = {};
  for (const option of page.hub) {
    if (option === 'saml') {
      const idp = createTestIdp();
      Object.assign(extra, {
        SERVICE_SAML_ENABLED: 'true',
        SERVICE_SAML_ENTRY_POINT: 'https://idp.example.test/sso',
        SERVICE_SAML_IDP_CERT_FILE: idp.certFile,
      });
    } else if (option === 'config-sample') {
      // The page's first config.yaml fragment is the hub's config.yaml (its working directory is `dir`).
      const sample = page.samples.find((entry) => entry.kind === 'config');
      if (!sample) throw new Error(`${page.file}: sample-hub config-sample, but the page has no config sample`);
      writeFileSync(path.join(dir, 'config.yaml'), sample.code);
    } else if (option.startsWith('data-dir=')) {
      // The default below already puts the data dir at <page dir>/data.
    } else {
      const [key, value] = option.split('=', 2);
      if (!key || value === undefined || !key.startsWith('SERVICE_')) throw new Error(`${page.file}: unknown sample-hub option ${option}`);
      extra[key] = value;
    }
  }
  const hub = spawnService(testEnv(path.join(dir, 'data'), extra), { cwd: dir });
  hubs.push(hub);
  return readyUrl(hub);
}

/** The sample's text as a reader types it, pointed at the test's hub. */
function pointAt(code: string, hubUrl: string): string {
  const hostPort = hubUrl.replace(/^http:\/\//, '');
  return code.replace(/(localhost|127\.0\.0\.1):8000/g, hostPort).replace(/https:\/\/hub\.example\.com/g, hubUrl);
}

/** The `run:` steps of a sample CI job, minus install/build (done by the test suite's setup). */
function ciSteps(sample: Sample): { name: string; run: string; env: Record<string, string> }[] {
  const workflow = parseYaml(sample.code) as {
    jobs: Record<string, { env?: Record<string, string>; steps: { name?: string; run?: string; uses?: string }[] }>;
  };
  return Object.values(workflow.jobs).flatMap((job) =>
    job.steps
      .filter((step) => step.run !== undefined && !/^npm ci\b/.test(step.run))
      .map((step) => ({ name: step.name ?? step.run!, run: step.run!, env: job.env ?? {} })),
  );
}

function runScript(script: string, cwd: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // Under the test's own 120 s: a page of offline test runs took over 60 s under the full suite's load (CI run 5).
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

describe('the samples of the documentation site', () => {
  it('finds the guides and their samples', () => {
    expect(pages.map((page) => page.file)).toEqual(expect.arrayContaining(['guide/getting-started.md', 'guides/workflows-ci.md', 'slack.md', 'telegram.md']));
    expect(pages.flatMap((page) => page.samples).filter((sample) => sample.kind === 'run').length).toBeGreaterThan(10);
  });

  it('marks every code block with how it is checked', () => {
    const unmarked = pages.flatMap((page) => page.samples.filter((sample) => sample.kind === null).map((sample) => `${sample.file}:${sample.line}`));
    expect(unmarked).toEqual([]);
    const unexplained = pages.flatMap((page) =>
      page.samples
        .filter((sample) => ['platform', 'external', 'pending', 'long-running'].includes(sample.kind!) && sample.kind !== 'long-running' && !sample.detail)
        .map((sample) => `${sample.file}:${sample.line}`),
    );
    expect(unexplained).toEqual([]);
  });

  it('loads every config.yaml fragment', () => {
    const refused: string[] = [];
    for (const sample of pages.flatMap((page) => page.samples).filter((entry) => entry.kind === 'config')) {
      const dir = makeTempDir();
      writeFileSync(path.join(dir, 'config.yaml'), sample.code);
      try {
        loadConfig({ env: { SERVICE_JWT_SECRET: TEST_JWT_SECRET }, cwd: dir, channels: CHANNELS });
      } catch (error) {
        refused.push(`${sample.file}:${sample.line}: ${(error as Error).message}`);
      }
    }
    expect(refused).toEqual([]);
  });

  it('has a hub accept every workflow file (dry-run sync)', async () => {
    const samples = pages.flatMap((page) => page.samples).filter((entry) => entry.kind === 'workflow');
    expect(samples.length).toBeGreaterThan(0);
    const { dir } = pageDirectory();
    const url = await startHub({ file: 'workflow samples', samples: [], hub: [] }, dir);
    const { access_token: token } = await post(`${url}/api/v1/auth/register`, ADMIN);
    const result = await post(`${url}/api/v1/assistant/workflows/sync`, { workflows: samples.map((sample) => parseYaml(sample.code)), dry_run: true }, token);
    expect(result.errors).toEqual([]);
    expect(result.created).toHaveLength(samples.length);
  });

  it('validates every workflow test file', () => {
    const samples = pages.flatMap((page) => page.samples).filter((entry) => entry.kind === 'workflow-test');
    expect(samples.length).toBeGreaterThan(0);
    const problems = samples.flatMap((sample) => parseCaseFile(sample.code, `${sample.file}:${sample.line}`).problems);
    expect(problems).toEqual([]);
  });

  const runnable = pages.filter((page) => page.samples.some((sample) => sample.kind === 'run' || sample.kind === 'ci-job'));
  it.each(runnable.map((page) => [page.file, page] as const))(
    'runs the samples of %s against a real hub',
    async (_file, page) => {
      const { dir, bin } = pageDirectory();
      const url = await startHub(page, dir);
      const env: Record<string, string> = {
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        HOME: dir,
        SWITCHBOARD_CONFIG_DIR: path.join(dir, '.config'),
        LANG: 'C.UTF-8',
      };
      // A page that registers its own first user starts from an empty hub; the others get an admin's token.
      const registersItself = page.samples.some((sample) => sample.kind === 'run' && sample.code.includes('/auth/register'));
      let token = '';
      if (!registersItself) {
        token = (await post(`${url}/api/v1/auth/register`, ADMIN)).access_token;
        env.TOKEN = token;
      }
      const parts = ['set -eu'];
      for (const sample of page.samples) {
        if (sample.kind === 'run') parts.push(`echo "::: ${sample.file}:${sample.line}" >&2`, pointAt(sample.code, url));
      }
      const result = await runScript(parts.join('\n'), dir, env);
      if (process.env.DOCS_SAMPLES_VERBOSE) process.stdout.write(`\n=== ${page.file}\n${result.stdout}\n${result.stderr}\n`);
      const failedAt = [...result.stderr.matchAll(/^::: (.+)$/gm)].pop()?.[1] ?? 'before the first sample';
      const report = `exit ${result.code} in the sample at ${failedAt}\n--- stdout\n${result.stdout.slice(-3000)}\n--- stderr\n${result.stderr.slice(-3000)}`;
      // The whole report (stdout and stderr) as the failure: a diff of two equal reports showed none of it.
      if (result.code !== 0) throw new Error(report);
      // A sample that printed an error envelope did not do what the page says.
      expect(result.stdout).not.toMatch(/"error":\{"code"/);

      for (const sample of page.samples.filter((entry) => entry.kind === 'ci-job')) {
        const key = (await post(`${url}/api/v1/auth/api-keys`, { label: 'docs ci-job sample' }, token)).key as string;
        for (const step of ciSteps(sample)) {
          const stepEnv = Object.fromEntries(
            Object.entries(step.env).map(([name, value]) => [name, pointAt(value.replace(/\$\{\{\s*secrets\.SWITCHBOARD_API_KEY\s*\}\}/, key), url)]),
          );
          // The job runs in a checkout of this project: the repository root (npm ci and the build are done).
          const outcome = await runScript(pointAt(step.run, url), REPO_ROOT, { ...env, ...stepEnv });
          expect({ step: step.name, code: outcome.code, output: outcome.stdout + outcome.stderr }).toEqual({
            step: step.name,
            code: 0,
            output: expect.any(String),
          });
        }
      }
    },
    120_000,
  );
});
