import type { Config } from '../../config';
import { calculatorTool } from './calculator';
import { currentTimeTool } from './current-time';
import { httpFetchTool } from './http-fetch';
import { knowledgeSearchTool, type KnowledgeSearch } from './knowledge-search';
import { ToolRegistry } from './registry';
import { runCommandTool } from './run-command';
import { systemResolver, type Resolver } from './ssrf-guard';
import { webSearchTool } from './web-search';
import { writeFileTool } from './write-file';

export { ToolRegistry, type ToolValidation } from './registry';
export { ToolError } from './tool-error';
export type { Tool, ToolAvailability, ToolContext } from './tool';
export type { KnowledgeHit, KnowledgeSearch } from './knowledge-search';

export interface ToolRegistryOptions {
  /** Absolute path of <data_dir>/workspace/ (write_file and run_command work there only). */
  workspaceDir: string;
  /** Knowledge collections; none: knowledge_search reports itself unavailable. */
  knowledge?: KnowledgeSearch;
  /** DNS for http_fetch's SSRF guard (tests map names to local addresses). */
  resolve?: Resolver;
  /** The clock of current_time (tests). */
  now?: () => Date;
}

/**
 * Every built-in tool, configured. All are registered, including unavailable ones (web_search
 * without a key, run_command when disabled): `availability()` says why, and the runner turns that
 * into TOOL_EXPANSION_FAILED when one is asked for.
 */
export function createToolRegistry(tools: Readonly<Config['tools']>, options: ToolRegistryOptions): ToolRegistry {
  return new ToolRegistry()
    .register(currentTimeTool(options.now))
    .register(calculatorTool())
    .register(knowledgeSearchTool(options.knowledge))
    .register(
      httpFetchTool(
        {
          allowPrivate: tools.http_fetch.allow_private,
          allowedHosts: tools.http_fetch.allowed_hosts,
          timeoutMs: tools.http_fetch.timeout_s * 1000,
          maxBytes: tools.http_fetch.max_bytes,
          maxRedirects: tools.http_fetch.max_redirects,
          maxTextChars: tools.http_fetch.max_text_chars,
        },
        options.resolve ?? systemResolver,
      ),
    )
    .register(
      webSearchTool({
        apiKey: tools.web_search.api_key,
        endpoint: tools.web_search.endpoint,
        timeoutMs: tools.web_search.timeout_s * 1000,
        maxResults: tools.web_search.max_results,
      }),
    )
    .register(writeFileTool({ workspaceDir: options.workspaceDir, maxBytes: tools.write_file.max_bytes }))
    .register(
      runCommandTool({
        enabled: tools.run_command.enabled,
        workspaceDir: options.workspaceDir,
        timeoutMs: tools.run_command.timeout_s * 1000,
        maxOutputBytes: tools.run_command.max_output_bytes,
      }),
    );
}
