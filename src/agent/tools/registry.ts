import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { ToolSpec } from '../provider';
import type { Tool } from './tool';

export type ToolValidation = { ok: true; input: Record<string, unknown> } | { ok: false; error: string };

/** Longest part of the model's raw arguments quoted back in an error. */
const QUOTE_LIMIT = 200;

/**
 * The tools the agent knows, each with its JSON schema compiled once. `validate` is what the runner
 * calls on a model's raw arguments before anything runs; its errors are written for the model, so
 * it can correct the call and try again.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, { tool: Tool; check: ValidateFunction }>();
  private readonly ajv: Ajv;

  /**
   * `strictSchemas` (default): a schema with a typo'd keyword is refused at registration instead of
   * validating nothing. Off for schemas written elsewhere (an MCP server's), which may carry
   * keywords of their own.
   */
  constructor(options: { strictSchemas?: boolean } = {}) {
    const strict = options.strictSchemas ?? true;
    // `format` is checked only in our own schemas (which use none): a server checks its own formats.
    this.ajv = new Ajv({ allErrors: true, strict, useDefaults: true, ...(strict ? {} : { validateFormats: false }) });
  }

  /** Adds a tool; throws on a duplicate name or an invalid schema (a programming error). */
  register(tool: Tool): this {
    if (this.tools.has(tool.name)) throw new Error(`tool "${tool.name}" is already registered`);
    if (tool.parameters.type !== 'object') throw new Error(`tool "${tool.name}": parameters must be a JSON schema of type "object"`);
    this.tools.set(tool.name, { tool, check: this.ajv.compile(tool.parameters) });
    return this;
  }

  list(): Tool[] {
    return [...this.tools.values()].map((entry) => entry.tool);
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name)?.tool;
  }

  /** What the model is told about these tools (all of them, or the named ones that exist). */
  specs(names?: readonly string[]): ToolSpec[] {
    const tools = names ? names.flatMap((name) => this.get(name) ?? []) : this.list();
    return tools.map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
  }

  /** Parses the model's raw arguments and checks them against the tool's schema (filling in defaults). */
  validate(name: string, rawArguments: string): ToolValidation {
    const entry = this.tools.get(name);
    if (!entry) return { ok: false, error: `There is no tool named "${name}". Available tools: ${[...this.tools.keys()].join(', ')}.` };
    let input: unknown;
    // Some servers send "" for a call without arguments.
    const text = rawArguments.trim() === '' ? '{}' : rawArguments;
    try {
      input = JSON.parse(text);
    } catch (error) {
      return { ok: false, error: `The arguments for ${name} are not valid JSON (${(error as Error).message}): ${quote(rawArguments)}. Send one JSON object.` };
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      return { ok: false, error: `The arguments for ${name} must be a JSON object, not ${Array.isArray(input) ? 'an array' : JSON.stringify(input)}.` };
    }
    if (!entry.check(input)) return { ok: false, error: `Invalid arguments for ${name}: ${describeErrors(entry.check.errors ?? [])}.` };
    return { ok: true, input: input as Record<string, unknown> };
  }
}

function quote(text: string): string {
  return text.length > QUOTE_LIMIT ? `${JSON.stringify(text.slice(0, QUOTE_LIMIT))}…` : JSON.stringify(text);
}

/** ajv's errors in words, e.g. `timezone must be string; unknown property "zone"`. */
function describeErrors(errors: readonly ErrorObject[]): string {
  return errors
    .map((error) => {
      const where = error.instancePath ? error.instancePath.slice(1).replaceAll('/', '.') : 'the arguments';
      if (error.keyword === 'additionalProperties') return `unknown property "${String(error.params.additionalProperty)}"`;
      if (error.keyword === 'required') return `missing required property "${String(error.params.missingProperty)}"`;
      if (error.keyword === 'enum')
        return `${where} must be one of ${(error.params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
      return `${where} ${error.message ?? 'is invalid'}`;
    })
    .join('; ');
}
