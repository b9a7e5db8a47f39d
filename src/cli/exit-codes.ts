/** The CLI's exit statuses (docs/reference/cli.md, generated from the comments below); scripts and CI branch on them. */
export const EXIT = {
  /** Everything asked for was done (or, for a dry run, would be done). */
  OK: 0,
  /** The hub refused something (a workflow, a request), or a workflow file is invalid. */
  REFUSED: 1,
  /** Usage error, the hub cannot be reached or answers strangely, or authentication failed. */
  FAILED: 2,
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
