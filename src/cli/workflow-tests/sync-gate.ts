import path from 'node:path';
import type { CliContext } from '../context';
import { EXIT } from '../exit-codes';
import { runWorkflowTests } from './run-tests';

export interface SyncTestOptions {
  test?: boolean;
  junit?: string;
}

/**
 * `workflows sync <dir> --test`: the cases of `<dir>/tests` run offline on `<dir>`'s workflows first.
 * True when every case passed; otherwise the sync is refused (nothing is sent to the hub).
 */
export async function gateOnTests(context: CliContext, dir: string, options: SyncTestOptions): Promise<boolean> {
  const code = await runWorkflowTests(context, {
    workflowsDir: dir,
    paths: [path.join(dir, 'tests')],
    junit: options.junit,
    target: { kind: 'local', model: { kind: 'scripted' } },
    env: context.env ?? {},
  });
  if (code === EXIT.OK) return true;
  context.err('✗ The workflow tests failed: nothing was synced.');
  return false;
}
