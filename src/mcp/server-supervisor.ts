import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { McpServerConfig } from '../config/mcp-schema';
import type { Logger } from '../logs/logger';
import { VERSION } from '../version';
import { guardedCommand } from './stdio-guard';

export type McpServerState = 'starting' | 'ready' | 'failed' | 'stopped';
export type { McpToolDefinition };

/** Restart backoff after a crash or a failed start: doubled from the first up to the cap. */
export const MCP_RESTART_DEFAULTS = { firstDelayMs: 1_000, maxDelayMs: 30_000 } as const;

export interface SupervisorListener {
  /** The server's tool list, each time it is (re)read: after a start and on `tools/list_changed`. */
  toolsListed(server: string, tools: McpToolDefinition[]): void;
}

/**
 * One MCP server of this process: starts it (stdio under the guard, or Streamable HTTP with a
 * legacy SSE fallback), reads its tools, calls them, and restarts it with backoff when it crashes
 * or fails to start. `close` ends it for good (stdin closed, the process reaped).
 */
export class McpServerSupervisor {
  state: McpServerState = 'starting';
  restarts = 0;
  lastError: string | null = null;
  readonly transport: 'stdio' | 'http';
  private client: Client | null = null;
  private starting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly logger: Logger,
    private readonly listener: SupervisorListener,
    private readonly cwd: string,
  ) {
    this.transport = 'command' in this.config ? 'stdio' : 'http';
  }

  get timeoutMs(): number {
    return this.config.timeout_s * 1000;
  }

  /** Starts the server unless it runs or is starting; resolves once it is ready or has failed. */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.state === 'ready') return Promise.resolve();
    this.starting ??= this.connect().finally(() => (this.starting = null));
    return this.starting;
  }

  /** Ends the running server (if any) and starts it again now; counted as a restart. */
  async restart(): Promise<void> {
    if (this.closed) return;
    this.clearRetry();
    await this.disconnect();
    this.restarts += 1;
    this.state = 'starting';
    await this.start();
  }

  async callTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    // A server that is not running fails the call at once: restarts follow the backoff, not the calls.
    const client = this.client;
    if (this.state !== 'ready' || !client) throw new Error(`the MCP server "${this.name}" is not running${this.lastError ? `: ${this.lastError}` : ''}`);
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: this.timeoutMs, signal });
    return result as CallToolResult;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clearRetry();
    await this.disconnect();
    this.state = 'stopped';
  }

  private async connect(): Promise<void> {
    // A retry after a failure stays `failed` until it succeeds (readiness does not flap meanwhile).
    if (this.state !== 'failed') this.state = 'starting';
    const client = new Client(
      { name: 'switchboard', version: VERSION },
      { capabilities: {}, listChanged: { tools: { onChanged: (error, tools) => this.toolsChanged(error, tools) } } },
    );
    client.onclose = () => this.closedUnexpectedly(client);
    try {
      await this.openTransport(client);
      const tools = await this.listTools(client);
      if (this.closed) return void (await client.close());
      this.client = client;
      this.state = 'ready';
      this.failures = 0;
      this.lastError = null;
      this.logger.info({ mcp_server: this.name, tools: tools.length }, 'MCP server ready');
      this.listener.toolsListed(this.name, tools);
    } catch (error) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      this.failed(error instanceof Error ? error.message : String(error));
    }
  }

  private async openTransport(client: Client): Promise<void> {
    const options = { timeout: this.timeoutMs };
    if ('command' in this.config) return client.connect(this.stdioTransport(this.config), options);
    const url = new URL(this.config.url);
    const requestInit = { headers: { ...this.config.headers } };
    try {
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit }), options);
    } catch (error) {
      // A legacy server (HTTP+SSE, protocol 2024-11-05) refuses the POST of Streamable HTTP with a 4xx.
      const status = error instanceof StreamableHTTPError ? (error.code ?? 0) : 0;
      if (status < 400 || status > 499) throw error;
      await client.connect(new SSEClientTransport(url, { requestInit }), options);
    }
  }

  private stdioTransport(config: Extract<McpServerConfig, { command: string }>): Transport {
    const guarded = guardedCommand(config.command, config.args);
    const transport = new StdioClientTransport({
      ...guarded,
      env: { ...getDefaultEnvironment(), ...config.env },
      cwd: config.cwd ? path.resolve(this.cwd, config.cwd) : this.cwd,
      stderr: 'pipe',
    });
    // The server's stderr: the hub log at debug, named (never parsed; it may hold anything).
    const stderr = transport.stderr;
    if (stderr) createInterface({ input: stderr as Readable }).on('line', (line) => this.logger.debug({ mcp_server: this.name }, line.slice(0, 2_000)));
    return transport;
  }

  private async listTools(client: Client): Promise<McpToolDefinition[]> {
    const tools: McpToolDefinition[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.timeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  private toolsChanged(error: Error | null, tools: McpToolDefinition[] | null): void {
    if (error || !tools) return void this.logger.warn({ mcp_server: this.name, err: error }, 'MCP server: could not read its changed tool list');
    this.listener.toolsListed(this.name, tools);
  }

  private closedUnexpectedly(client: Client): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.failed('the server closed the connection (it exited or crashed)');
  }

  private failed(reason: string): void {
    this.state = 'failed';
    this.lastError = reason;
    if (this.closed) return;
    const delay = Math.min(MCP_RESTART_DEFAULTS.firstDelayMs * 2 ** this.failures, MCP_RESTART_DEFAULTS.maxDelayMs);
    this.failures += 1;
    this.logger.warn({ mcp_server: this.name, reason, retry_in_ms: delay }, 'MCP server failed; restarting after a delay');
    this.clearRetry();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.restarts += 1;
      void this.start();
    }, delay);
    this.retryTimer.unref();
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await client.close().catch(() => undefined);
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}
