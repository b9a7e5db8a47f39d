import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * ARCHITECTURE.md's import directions, as `.dependency-cruiser.cjs` encodes them (`npm run
 * lint:layers` runs the same check). dependency-cruiser is ESM-only, so it runs as its CLI.
 */
const REPO_ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(REPO_ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(REPO_ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const run = promisify(execFile);

afterAll(removeTempDirs);

/** depcruise's exit status (the number of errors) and its report. */
async function cruise(cwd: string): Promise<{ status: number; report: string }> {
  try {
    const { stdout } = await run(process.execPath, [DEPCRUISE, 'src', 'adapters', '--config', CONFIG, '--output-type', 'err'], { cwd, maxBuffer: 16 * 1024 * 1024 });
    return { status: 0, report: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { status: failed.code ?? -1, report: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

it('finds no import against the layering rules in src/ and adapters/', async () => {
  const { status, report } = await cruise(REPO_ROOT);
  // On failure the assertion shows depcruise's own report: each violated rule, file by file.
  expect({ status, report: status === 0 ? 'clean' : report }).toEqual({ status: 0, report: 'clean' });
});

it('fails, naming the rule, for each kind of forbidden import', async () => {
  const dir = makeTempDir();
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }),
    // core imports nothing else in the repo
    'src/core/contract.ts': "import { limit } from '../api/limit';\nexport const contract = limit;\n",
    'src/api/limit.ts': 'export const limit = 1;\n',
    // config is a leaf
    'src/config/schema.ts': "import { limit } from '../api/limit';\nexport const schema = limit;\n",
    // an adapter reaches src/ only through src/core, and never another channel's folder
    'adapters/slack/render.ts': "import { limit } from '../../src/api/limit';\nimport { chat } from '../telegram/chat';\nexport const render = limit + chat;\n",
    'adapters/telegram/chat.ts': 'export const chat = 2;\n',
    // the registry lists adapter folders; it does not reach into src/ beyond core
    'adapters/index.ts': "import { limit } from '../src/api/limit';\nexport const CHANNELS = [limit];\n",
    // only main.ts knows the adapters; nothing imports main.ts
    'src/routing/scope.ts': "import { CHANNELS } from '../../adapters';\nimport { started } from '../main';\nexport const scope = [CHANNELS, started];\n",
    'src/main.ts': 'export const started = true;\n',
    // src/turns is below those who ask it: it never imports the worker (nor the sessions, the API, the server)
    'src/turns/owner.ts': "import { runner } from '../worker/runner';\nexport const owner = runner;\n",
    'src/worker/runner.ts': 'export const runner = 5;\n',
    // shipped code never imports tests
    'src/sessions/fixture.ts': "import { fake } from '../../test/fakes/fake';\nexport const fixture = fake;\n",
    'test/fakes/fake.ts': 'export const fake = 3;\n',
    // folders import one way: knowledge → agent → knowledge is a cycle
    'src/agent/tokens.ts': "import { index } from '../knowledge/index';\nexport const tokens = () => index;\n",
    'src/knowledge/index.ts': "import { tokens } from '../agent/tokens';\nexport const index = 4;\nexport const chunk = () => tokens();\n",
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const { status, report } = await cruise(dir);
  expect(status).toBeGreaterThan(0);
  const violated = (rule: string, from: string) => new RegExp(`error ${rule}: ${from.replaceAll('.', '\\.')}`).test(report);
  expect({
    core: violated('core-imports-nothing', 'src/core/contract.ts'),
    config: violated('config-is-a-leaf', 'src/config/schema.ts'),
    adapterToSrc: new RegExp('error adapters-import-only-core: adapters/slack/render\\.ts → src/api/limit\\.ts').test(report),
    adapterToOtherChannel: new RegExp('error adapters-import-only-core: adapters/slack/render\\.ts → adapters/telegram/chat\\.ts').test(report),
    registry: violated('registry-imports-only-adapters-and-core', 'adapters/index.ts'),
    adaptersOutsideMain: violated('only-main-knows-adapters', 'src/routing/scope.ts'),
    main: violated('nothing-imports-main', 'src/routing/scope.ts'),
    tests: violated('no-tests-in-product', 'src/sessions/fixture.ts'),
    turns: violated('turns-below-their-callers', 'src/turns/owner.ts'),
    cycle: /error no-folder-cycles: src\/(agent|knowledge)/.test(report),
  }).toEqual({
    core: true,
    config: true,
    adapterToSrc: true,
    adapterToOtherChannel: true,
    registry: true,
    adaptersOutsideMain: true,
    main: true,
    tests: true,
    turns: true,
    cycle: true,
  });
});
