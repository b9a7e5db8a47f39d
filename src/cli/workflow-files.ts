import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { WorkflowFileError, parseWorkflowYaml } from '../workflows/yaml';
import { CliError, EXIT } from './exit-codes';

/** One parsed workflow file; `file` is the path as shown to the user (`<dir>/<name>.yaml`). */
export interface WorkflowFile {
  file: string;
  workflow: Record<string, unknown>;
}

const WORKFLOW_FILE = /\.ya?ml$/i;

/** Every `*.yaml` / `*.yml` directly in `dir`, in name order (so sync indexes are stable). */
export async function workflowFileNames(dir: string): Promise<string[]> {
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new CliError(`No such directory: ${dir}`);
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && WORKFLOW_FILE.test(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((name) => path.join(dir, name));
}

/**
 * Reads and parses every workflow file of `dir`. If any file is broken YAML, nothing is returned:
 * syncing the others with `--prune` would delete the broken file's workflow from the hub.
 * @throws CliError (exit 1) listing every broken file with its line.
 */
export async function readWorkflowDir(dir: string): Promise<WorkflowFile[]> {
  const files: WorkflowFile[] = [];
  const broken: WorkflowFileError[] = [];
  for (const file of await workflowFileNames(dir)) {
    try {
      files.push({ file, workflow: parseWorkflowYaml(await readFile(file, 'utf8'), file) });
    } catch (error) {
      if (!(error instanceof WorkflowFileError)) throw error;
      broken.push(error);
    }
  }
  if (broken.length > 0) {
    const lines = broken.map((error) => `✗ ${error.message}`);
    throw new CliError(`${lines.join('\n')}\n${broken.length} workflow file(s) cannot be read; nothing was sent to the hub.`, EXIT.REFUSED);
  }
  return files;
}
