/** The CLI's exit statuses (docs/reference/cli.md, generated from the comments below); scripts and CI branch on them. */
export const EXIT = {
  /** Everything asked for was done (or, for a dry run, would be done); `chat`: the turn ended without an error. */
  OK: 0,
  /** The hub refused something (a workflow, a request), a workflow file is invalid, or a chat turn ended with an error. */
  REFUSED: 1,
  /** Usage error, the hub cannot be reached or answers strangely, or authentication failed. */
  FAILED: 2,
  /** Stopped by Ctrl-C (128 + SIGINT, as shells report it). */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as one line on stderr, then exits with `exitCode`. Never carries secrets. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.FAILED,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
