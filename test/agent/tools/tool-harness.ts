import { configSchema, type Config } from '../../../src/config';
import { createToolRegistry, type ToolRegistryOptions } from '../../../src/agent/tools';
import type { ToolContext } from '../../../src/agent/tools/tool';

/** The tools section with its defaults, changed by `overrides`. */
export function toolsConfig(overrides: Record<string, unknown> = {}): Config['tools'] {
  return configSchema.shape.tools.parse(overrides);
}

export function registry(overrides: Record<string, unknown> = {}, options: Partial<ToolRegistryOptions> = {}) {
  return createToolRegistry(toolsConfig(overrides), { workspaceDir: '/nonexistent-workspace', ...options });
}

export function context(signal = new AbortController().signal): ToolContext {
  return { sessionId: 'session-1', signal };
}

/** Validates raw arguments, runs the tool, and returns its result (throws on refusal). */
export async function call(tools: ReturnType<typeof registry>, name: string, rawArguments: string, toolContext = context()): Promise<unknown> {
  const validation = tools.validate(name, rawArguments);
  if (!validation.ok) throw new Error(`validation failed: ${validation.error}`);
  return tools.get(name)!.run(validation.input, toolContext);
}

/** The error a tool run throws (fails the test when it does not). */
export async function refusal(run: Promise<unknown>): Promise<Error> {
  try {
    await run;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the tool to refuse');
}
