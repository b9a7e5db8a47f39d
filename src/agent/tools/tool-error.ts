/**
 * A refusal or failure whose message is meant for the model (and the user): bad input, an address
 * the SSRF guard refuses, a path outside the workspace. Anything else a tool throws is a bug, and the
 * runner should report it generically.
 */
export class ToolError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolError';
  }
}
