import { ToolRegistry, type ToolValidation } from '../agent/tools/registry';
import { pinnedServer } from '../agent/tools/pins';
import { passesFilter } from '../agent/tools/tool-globs';
import type { McpConfig } from '../config/mcp-schema';
import { AppError } from '../core/errors';
import type { Logger } from '../logs/logger';
import { mcpToolNeedsConfirmation } from './confirm-rule';
import { definitionHash, type DefinitionPinStore } from './definition-pins';
import { McpTool, type McpCallObserver } from './mcp-tool';
import { modelToolName } from './model-names';
import type { McpServerSupervisor, McpServerState, McpToolDefinition } from './server-supervisor';

export interface McpHubOptions {
  config: Readonly<McpConfig>;
  logger: Logger;
  pins: DefinitionPinStore;
  /** Relative `cwd`s and commands resolve against it (the hub's working directory). */
  cwd: string;
  /** Names the model must not be given (the built-in tools'). */
  reservedNames: readonly string[];
  observe?: McpCallObserver;
}

/** One tool in the operations view (GET /api/v1/mcp/servers). */
export interface McpToolView {
  name: string;
  model_name: string;
  description: string;
  requires_confirmation: boolean;
  changed: boolean;
}

export interface McpServerView {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  confirm: string;
  restarts: number;
  last_error: string | null;
  tools: McpToolView[];
}

/**
 * Every MCP server of this process and the tools they offer, as agent tools. Servers start with
 * the process (`start`) and are supervised (restarted with backoff); tool lists are filtered by
 * each server's `tools` globs, checked against the pinned definitions (a changed one is withheld)
 * and named for the model. `close` ends every server.
 */
export class McpHub {
  private readonly supervisors = new Map<string, McpServerSupervisor>();
  private readonly listed = new Map<string, McpToolDefinition[]>();
  private readonly pinned = new Map<string, Map<string, string>>();
  private tools: McpTool[] = [];
  private registry = new ToolRegistry({ strictSchemas: false });
  private pinning: Promise<void> = Promise.resolve();

  constructor(private readonly options: McpHubOptions) {
    const servers = Object.entries(options.config.servers);
    if (servers.length === 0) return;
    // The MCP SDK is loaded only when a server is configured (~0.25 s of a start, 2-core machine).
    const { McpServerSupervisor } = require('./server-supervisor') as typeof import('./server-supervisor');
    for (const [name, config] of servers) {
      this.supervisors.set(
        name,
        new McpServerSupervisor(name, config, options.logger, { toolsListed: (server, tools) => this.toolsListed(server, tools) }, options.cwd),
      );
    }
  }

  get serverNames(): string[] {
    return [...this.supervisors.keys()];
  }

  /** Starts every server in the background (a failed start is retried with backoff). */
  start(): void {
    for (const supervisor of this.supervisors.values()) void supervisor.start();
  }

  async close(): Promise<void> {
    await Promise.all([...this.supervisors.values()].map((supervisor) => supervisor.close()));
  }

  list(): McpTool[] {
    return this.tools;
  }

  get(name: string): McpTool | undefined {
    return this.tools.find((tool) => tool.name === name);
  }

  validate(name: string, rawArguments: string): ToolValidation {
    return this.registry.validate(name, rawArguments);
  }

  /** Whether a workflow's tool_list entry names a configured server (`docs.search`, `docs.*`). */
  acceptsPin(entry: string): boolean {
    const server = pinnedServer(entry);
    return server !== null && this.supervisors.has(server) && entry.length > server.length + 1;
  }

  /**
   * Before a turn offers the tools of these pinned entries: servers still starting are waited for
   * (each at most its own start timeout), and pins another process approved are re-read.
   */
  async prepare(pinned: readonly string[] | undefined): Promise<void> {
    const servers = new Set((pinned ?? []).map(pinnedServer).filter((server): server is string => server !== null && this.supervisors.has(server)));
    await Promise.all(
      [...servers].map(async (server) => {
        const supervisor = this.supervisors.get(server)!;
        if (supervisor.state === 'starting') await supervisor.start();
        if (this.tools.some((tool) => tool.source.server === server && tool.changed)) await this.refreshPins(server);
      }),
    );
    await this.pinning;
  }

  servers(): McpServerView[] {
    return [...this.supervisors.values()].map((supervisor) => ({
      name: supervisor.name,
      transport: supervisor.transport,
      state: supervisor.state,
      confirm: supervisor.config.confirm,
      restarts: supervisor.restarts,
      last_error: supervisor.lastError,
      tools: this.tools.filter((tool) => tool.source.server === supervisor.name).map(toolView),
    }));
  }

  /** The names of servers that are not running (readiness reports them as degraded). */
  failedServers(): string[] {
    return [...this.supervisors.values()].filter((supervisor) => supervisor.state === 'failed').map((supervisor) => supervisor.name);
  }

  async restart(server: string): Promise<McpServerView> {
    const supervisor = this.supervisorOf(server);
    await supervisor.restart();
    await this.pinning;
    return this.servers().find((view) => view.name === server)!;
  }

  /** Approves the definition the server presents now; the tool is offered again. */
  async approve(server: string, tool: string, approvedBy: string): Promise<McpToolView & { previous_hash: string | null; hash: string }> {
    this.supervisorOf(server);
    const current = this.tools.find((candidate) => candidate.source.server === server && candidate.source.tool === tool);
    if (!current)
      throw new AppError('NOT_FOUND', `The MCP server "${server}" offers no tool "${tool}" now (is it running, and does its tools filter take it?).`);
    const previous = this.pinned.get(server)?.get(tool) ?? null;
    await this.options.pins.approve(server, tool, current.hash, approvedBy);
    await this.refreshPins(server);
    const approved = this.tools.find((candidate) => candidate.source.server === server && candidate.source.tool === tool)!;
    return { ...toolView(approved), previous_hash: previous, hash: approved.hash };
  }

  private supervisorOf(server: string): McpServerSupervisor {
    const supervisor = this.supervisors.get(server);
    if (!supervisor) throw new AppError('NOT_FOUND', `No MCP server named "${server}" is configured (mcp.servers in config.yaml).`);
    return supervisor;
  }

  private toolsListed(server: string, definitions: McpToolDefinition[]): void {
    const filter = this.supervisors.get(server)!.config.tools;
    this.listed.set(
      server,
      definitions.filter((definition) => passesFilter(filter, definition.name)),
    );
    this.pinning = this.pinning
      .then(() => this.pinNew(server))
      .catch((error: unknown) => this.options.logger.error({ err: error, mcp_server: server }, 'MCP: could not pin tool definitions'));
  }

  /** New tools are pinned as first seen; then every tool is compared with its pin. */
  private async pinNew(server: string): Promise<void> {
    const pins = await this.options.pins.pinned(server);
    for (const definition of this.listed.get(server) ?? []) {
      if (!pins.has(definition.name)) await this.options.pins.pinIfNew(server, definition.name, definitionHash(definition));
    }
    await this.refreshPins(server);
  }

  private async refreshPins(server: string): Promise<void> {
    this.pinned.set(server, await this.options.pins.pinned(server));
    this.rebuild();
  }

  /** Every server's tools as agent tools, named for the model in config order, with their schemas compiled. */
  private rebuild(): void {
    const taken = new Set(this.options.reservedNames);
    const registry = new ToolRegistry({ strictSchemas: false });
    const tools: McpTool[] = [];
    for (const [server, supervisor] of this.supervisors) {
      const pins = this.pinned.get(server);
      for (const definition of this.listed.get(server) ?? []) {
        const hash = definitionHash(definition);
        const pinnedHash = pins?.get(definition.name);
        const tool = new McpTool({
          definition,
          modelName: modelToolName(server, definition.name, taken),
          supervisor,
          requiresConfirmation: mcpToolNeedsConfirmation(supervisor.config, definition.name, definition.annotations),
          changed: pinnedHash === undefined || pinnedHash !== hash,
          hash,
          observe: this.options.observe,
        });
        taken.add(tool.name);
        try {
          registry.register(tool);
        } catch (error) {
          tool.schemaProblem = error instanceof Error ? error.message : String(error);
        }
        tools.push(tool);
      }
    }
    this.tools = tools;
    this.registry = registry;
  }
}

function toolView(tool: McpTool): McpToolView {
  return {
    name: tool.source.tool,
    model_name: tool.name,
    description: tool.description,
    requires_confirmation: tool.requiresConfirmation,
    changed: tool.changed,
  };
}
