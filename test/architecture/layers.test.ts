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
    const { stdout } = await run(process.execPath, [DEPCRUISE, 'src', 'adapters', 'web/src', '--config', CONFIG, '--output-type', 'err'], {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { status: 0, report: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { status: failed.code ?? -1, report: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

it('finds no import against the layering rules in src/, adapters/ and web/src/', async () => {
  const { status, report } = await cruise(REPO_ROOT);
  // On failure the assertion shows depcruise's own report: each violated rule, file by file.
  expect({ status, report: status === 0 ? 'clean' : report }).toEqual({ status: 0, report: 'clean' });
});

it('fails, naming the rule, for each kind of forbidden import', async () => {
  const dir = makeTempDir();
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }),
    // the protocol is the bottom layer, and runs in browsers
    'src/protocol/frames.ts': "import { limit } from '../api/limit';\nexport const frames = limit;\n",
    'src/protocol/clock.ts': "import { hostname } from 'node:os';\nexport const clock = hostname;\n",
    // core imports nothing else in the repo but the protocol (allowed)
    'src/core/contract.ts': "import { limit } from '../api/limit';\nimport { frames } from '../protocol/frames';\nexport const contract = limit + frames;\n",
    'src/api/limit.ts': 'export const limit = 1;\n',
    // config is a leaf
    'src/config/schema.ts': "import { limit } from '../api/limit';\nexport const schema = limit;\n",
    // an adapter reaches src/ only through src/core, and never another channel's folder
    'adapters/slack/render.ts': "import { limit } from '../../src/api/limit';\nimport { chat } from '../telegram/chat';\nexport const render = limit + chat;\n",
    'adapters/telegram/chat.ts': 'export const chat = 2;\n',
    // the registry lists adapter folders; it does not reach into src/ beyond core
    'adapters/index.ts': "import { limit } from '../src/api/limit';\nexport const CHANNELS = [limit];\n",
    // only the composition root knows the adapters (allowed there); nothing imports the root
    'src/routing/scope.ts':
      "import { CHANNELS } from '../../adapters';\nimport { started } from '../main';\nimport { composed } from '../compose/service';\nexport const scope = [CHANNELS, started, composed];\n",
    'src/compose/service.ts': "import { CHANNELS } from '../../adapters';\nexport const composed = CHANNELS;\n",
    'src/main.ts': "import { composed } from './compose/service';\nexport const started = composed;\n",
    // the web UI imports only the protocol of src/ (allowed)
    'web/src/page.ts':
      "import { contract } from '../../src/core/contract';\nimport { frames } from '../../src/protocol/frames';\nexport const page = [contract, frames];\n",
    // src/turns is below those who ask it: it never imports the worker (nor the sessions, the API, the server, the root)
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
    protocol: violated('protocol-imports-nothing', 'src/protocol/frames.ts'),
    protocolInBrowsers: violated('protocol-runs-in-browsers', 'src/protocol/clock.ts'),
    core: violated('core-imports-only-protocol', 'src/core/contract.ts'),
    coreToProtocol: /src\/core\/contract\.ts → src\/protocol\/frames\.ts/.test(report),
    config: violated('config-is-a-leaf', 'src/config/schema.ts'),
    adapterToSrc: new RegExp('error adapters-import-only-core: adapters/slack/render\\.ts → src/api/limit\\.ts').test(report),
    adapterToOtherChannel: new RegExp('error adapters-import-only-core: adapters/slack/render\\.ts → adapters/telegram/chat\\.ts').test(report),
    registry: violated('registry-imports-only-adapters-and-core', 'adapters/index.ts'),
    adaptersOutsideRoot: violated('only-composition-knows-adapters', 'src/routing/scope.ts'),
    adaptersInRoot: /only-composition-knows-adapters: src\/compose\//.test(report),
    main: new RegExp('error nothing-imports-the-composition-root: src/routing/scope\\.ts → src/main\\.ts').test(report),
    compose: new RegExp('error nothing-imports-the-composition-root: src/routing/scope\\.ts → src/compose/service\\.ts').test(report),
    mainToCompose: /nothing-imports-the-composition-root: src\/main\.ts/.test(report),
    web: new RegExp('error web-imports-only-protocol: web/src/page\\.ts → src/core/contract\\.ts').test(report),
    webToProtocol: /web\/src\/page\.ts → src\/protocol\//.test(report),
    tests: violated('no-tests-in-product', 'src/sessions/fixture.ts'),
    turns: violated('turns-below-their-callers', 'src/turns/owner.ts'),
    cycle: /error no-folder-cycles: src\/(agent|knowledge)/.test(report),
  }).toEqual({
    protocol: true,
    protocolInBrowsers: true,
    core: true,
    coreToProtocol: false,
    config: true,
    adapterToSrc: true,
    adapterToOtherChannel: true,
    registry: true,
    adaptersOutsideRoot: true,
    adaptersInRoot: false,
    main: true,
    compose: true,
    mainToCompose: false,
    web: true,
    webToProtocol: false,
    tests: true,
    turns: true,
    cycle: true,
  });
});
