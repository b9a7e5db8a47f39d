import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import type { Tool } from './tool';
import { ToolError } from './tool-error';

export interface RunCommandSettings {
  /** tools.run_command.enabled: off by default. */
  enabled: boolean;
  workspaceDir: string;
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is dropped. */
  maxOutputBytes: number;
}

export type RunCommandInput = {
  command: string;
};

/**
 * The child's whole environment: the hub's own (secrets included) is never passed on. A fixed
 * PATH rather than the hub's, so this module does not read process.env.
 */
const CHILD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Runs a shell command in the workspace, with a timeout and capped output. Off unless enabled. */
export function runCommandTool(settings: RunCommandSettings): Tool<RunCommandInput> {
  return {
    name: 'run_command',
    description: 'Run a shell command (sh -c) in the workspace directory and return its exit code and output. Asks a human first.',
    parameters: {
      type: 'object',
      properties: { command: { type: 'string', minLength: 1, maxLength: 4000 } },
      required: ['command'],
      additionalProperties: false,
    },
    requiresConfirmation: true,
    web: false,
    sideEffects: true,
    availability: () =>
      settings.enabled ? { ok: true } : { ok: false, reason: 'run_command is disabled: set tools.run_command.enabled: true in config.yaml' },
    async run(input, context) {
      // Checked here too: availability is advice to the runner, this is the guarantee.
      if (!settings.enabled) throw new ToolError('run_command is disabled on this hub.');
      try {
        await mkdir(settings.workspaceDir, { recursive: true });
      } catch (error) {
        // Its message names the absolute data directory: the model gets the code only.
        throw new ToolError(`The workspace directory could not be created (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, { cause: error });
      }
      return runShell(input.command, settings, context.signal);
    },
  };
}

function runShell(command: string, settings: RunCommandSettings, signal: AbortSignal) {
  return new Promise<{ exit_code: number | null; signal: string | null; stdout: string; stderr: string; timed_out: boolean; truncated: boolean }>(
    (resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: settings.workspaceDir,
        env: { PATH: CHILD_PATH, HOME: settings.workspaceDir, LANG: 'C.UTF-8' },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so a timeout kills what the command started as well.
        detached: true,
      });
      const output = { stdout: new CappedBuffer(settings.maxOutputBytes), stderr: new CappedBuffer(settings.maxOutputBytes) };
      child.stdout.on('data', (chunk: Buffer) => output.stdout.add(chunk));
      child.stderr.on('data', (chunk: Buffer) => output.stderr.add(chunk));
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, settings.timeoutMs);
      const onAbort = () => killGroup();
      signal.addEventListener('abort', onAbort, { once: true });
      child.on('error', (error) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        reject(new ToolError('The command could not be started.', { cause: error }));
      });
      child.on('close', (code, killedBy) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve({
          exit_code: code,
          signal: killedBy,
          stdout: output.stdout.text(),
          stderr: output.stderr.text(),
          timed_out: timedOut,
          truncated: output.stdout.truncated || output.stderr.truncated,
        });
      });
    },
  );
}

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
