import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Tool } from './tool';
import { ToolError } from './tool-error';

export interface WriteFileSettings {
  /** <data_dir>/workspace: nothing is written anywhere else. */
  workspaceDir: string;
  maxBytes: number;
}

export type WriteFileInput = {
  path: string;
  content: string;
};

/** Deepest directory nesting accepted in a path. */
const MAX_PATH_SEGMENTS = 32;

/**
 * Writes a UTF-8 text file inside the workspace (creating directories), replacing it if it exists.
 * Refused: absolute paths, `..`, and anything that would follow a symbolic link out of the workspace
 * (no component may be a link; the file itself is opened with O_NOFOLLOW).
 */
export function writeFileTool(settings: WriteFileSettings): Tool<WriteFileInput> {
  return {
    name: 'write_file',
    description: 'Write a text file in the workspace (a relative path such as "notes/plan.md"); replaces an existing file. Asks a human first.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, maxLength: 512, description: 'Relative to the workspace.' },
        content: { type: 'string' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    requiresConfirmation: true,
    web: false,
    sideEffects: true,
    availability: () => ({ ok: true }),
    async run(input) {
      const segments = checkRelativePath(input.path);
      const bytes = Buffer.byteLength(input.content, 'utf8');
      if (bytes > settings.maxBytes) throw new ToolError(`The content is ${bytes} bytes; write_file accepts at most ${settings.maxBytes}.`);
      try {
        await writeInside(settings.workspaceDir, segments, input);
      } catch (error) {
        // Node's file-system errors name the absolute path (the hub's data directory): never shown.
        throw error instanceof ToolError ? error : fileSystemRefusal(error, input.path);
      }
      return { path: segments.join('/'), bytes };
    },
  };
}

async function writeInside(workspaceDir: string, segments: string[], input: WriteFileInput): Promise<void> {
  await mkdir(workspaceDir, { recursive: true });
  const root = await realpath(workspaceDir);
  let directory = root;
  for (const segment of segments.slice(0, -1)) {
    directory = path.join(directory, segment);
    await ensureRealDirectory(directory, input.path);
  }
  const target = path.join(directory, segments.at(-1)!);
  let handle;
  try {
    handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new ToolError(`"${input.path}" is a symbolic link; write_file does not follow links.`);
    if (code === 'EISDIR') throw new ToolError(`"${input.path}" is a directory.`);
    throw error;
  }
  try {
    await handle.writeFile(input.content, 'utf8');
  } finally {
    await handle.close();
  }
}

/** Longest file or directory name most file systems take (bytes, not characters). */
const MAX_NAME_BYTES = 255;

/** A file-system failure in words the model can act on, naming only the workspace-relative path. */
function fileSystemRefusal(error: unknown, shown: string): ToolError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reasons: Record<string, string> = {
    ENAMETOOLONG: `a file or directory name in it is too long (at most ${MAX_NAME_BYTES} bytes each)`,
    ENOTDIR: 'a part of it is a file, not a directory',
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    EROFS: 'the workspace is read-only',
    ENOSPC: 'no space left on the device',
    EDQUOT: 'the disk quota is used up',
  };
  const reason = (code && reasons[code]) ?? `the file system refused it${code ? ` (${code})` : ''}`;
  return new ToolError(`"${shown}" could not be written: ${reason}.`, { cause: error });
}

/** The path's segments, or a refusal the model can act on. */
export function checkRelativePath(text: string): string[] {
  if (text.includes('\0')) throw new ToolError('The path contains a NUL character.');
  if (path.posix.isAbsolute(text) || path.win32.isAbsolute(text) || /^[A-Za-z]:/.test(text)) {
    throw new ToolError(`"${text}" is absolute; give a path relative to the workspace.`);
  }
  const segments = text.split(/[\\/]+/).filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new ToolError(`"${text}" contains ".."; paths must stay inside the workspace.`);
  if (segments.length === 0) throw new ToolError(`"${text}" does not name a file.`);
  if (segments.length > MAX_PATH_SEGMENTS) throw new ToolError(`"${text}" is nested more than ${MAX_PATH_SEGMENTS} levels deep.`);
  return segments;
}

async function ensureRealDirectory(directory: string, shown: string): Promise<void> {
  try {
    const stats = await lstat(directory);
    if (stats.isSymbolicLink()) throw new ToolError(`"${shown}" goes through a symbolic link; write_file does not follow links.`);
    if (!stats.isDirectory()) throw new ToolError(`"${shown}" goes through a file that is not a directory.`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    try {
      await mkdir(directory);
    } catch (mkdirError) {
      // A concurrent call created it first: check what is there now.
      if ((mkdirError as NodeJS.ErrnoException).code !== 'EEXIST') throw mkdirError;
      await ensureRealDirectory(directory, shown);
    }
  }
}
