import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/process';

/**
 * Every `switchboard` command builds the whole command tree first, so what only some actions need —
 * the workflow schemas (zod), YAML, the workflow test runner — is loaded by those actions. Loading it
 * all up front made `switchboard --help` take 0.41–0.53 s on a 2-core machine (bare Node: 0.11 s);
 * lazily, 0.19–0.26 s. Checked by what a start loads, not by a timing.
 */
it('the command tree loads no workflow schema, YAML or test runner', () => {
  const script = `
    const { run } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist/src/cli/index.js'))});
    process.stdout.write = () => true;
    run(['--help'], {}).then(() => console.error(JSON.stringify(Object.keys(require.cache))));
  `;
  const started = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(started.status).toBe(0);
  const loaded = JSON.parse(started.stderr) as string[];
  const relative = loaded.map((file) => path.relative(REPO_ROOT, file));
  expect(relative).toContain('dist/src/cli/commands/workflows.js');
  expect(relative.filter((file) => /workflow-schema|workflows\/yaml|workflow-tests\/run-tests|workflow-files|node_modules\/(zod|yaml)\//.test(file))).toEqual(
    [],
  );
});
