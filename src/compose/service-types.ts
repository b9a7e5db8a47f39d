import type { ApprovalService } from '../approvals/approval-service';
import type { PlatformIdentities } from '../approvals/platform-identities';
import type { DestinationStream } from 'pino';
import type { LlmProvider } from '../agent/provider';
import type { ToolCatalog } from '../agent/tool-box';
import type { AuditLog } from '../audit/audit-log';
import type { Config } from '../config';
import type { ChannelDescriptor } from '../core/channel';
import type { Hub, SocketAuth } from '../core/hub';
import type { RenderLeases } from '../core/render-lease';
import type { ControlBus, EventLog, TurnQueue, TurnRegistry, WorkerPresence } from '../core/turns';
import type { Database } from '../db/database';
import type { Models } from '../db/models';
import type { TurnStore } from '../db/turn-store';
import type { KnowledgeService } from '../knowledge';
import type { LogHub } from '../logs/log-hub';
import type { McpHub } from '../mcp/mcp-hub';
import type { Logger } from '../logs/logger';
import type { HubMetrics } from '../metrics/hub-metrics';
import type { TurnArrivals } from '../metrics/turn-arrivals';
import type { RoutingService } from '../routing/routing-service';
import type { Lifecycle } from '../server/lifecycle';
import type { ReadinessCheck } from '../server/readiness';
import type { ChannelPolicyDefault } from '../sessions/mid-turn-policy';
import type { PickupWatch } from '../turns/pickup-watch';
import type { SessionTools } from '../sessions/session-tools';
import type { TurnService } from '../turns/turn-service';
import type { Tracing } from '../tracing/tracing';
import type { DailyBudgets } from '../usage/budgets';

/** Exit status for configuration errors (sysexits.h EX_CONFIG). */
export const EXIT_CONFIG = 78;

/** How a process of the hub is started: by `npm start`, `npm run worker`, tests and benchmarks. */
export interface ServiceOptions {
  env: Record<string, string | undefined>;
  cwd?: string;
  /** Tests capture log lines here. */
  logDestination?: DestinationStream;
  /** The model; default from `llm.provider` (tests pass a controllable one). */
  provider?: LlmProvider;
  /** The tools; default: the built-in registry from config. */
  tools?: ToolCatalog;
  /** The channels; default: the registry (adapters/index.ts). Tests add a channel of their own. */
  channels?: readonly ChannelDescriptor[];
}

/** A started process of the hub (API with its embedded worker, or a worker only). */
export interface RunningService {
  config: Readonly<Config>;
  /** The hub port channels use (null in a worker-only process). */
  hub: Hub | null;
  /** How this process checks WebSocket upgrades (ChannelContext.socketAuth; null in a worker-only process), for tests that mount a socket of their own. */
  socketAuth: SocketAuth | null;
  logger: Logger;
  port: number;
  url: string;
  lifecycle: Lifecycle;
  /** The port of this process's own metrics listener (`metrics.port`), or null. */
  metricsPort: number | null;
  /** The database as this process uses it: tests and benchmarks count its statements. */
  storage: { store: TurnStore; sequelize: Database['sequelize'] };
  stop(): Promise<void>;
}

/** The queue and event drivers of a process: in-process, or on Redis. */
export interface Drivers {
  queue: TurnQueue;
  events: EventLog;
  control: ControlBus;
  registry: TurnRegistry;
  presence: WorkerPresence;
  /** Chats' rendering leases (issue 25): in-process, or keys in Redis shared by every API process. */
  leases: RenderLeases;
  description: string;
}

/** What every process (API or worker) holds once started: the parts both kinds use. */
export interface Core {
  /** The registry's channels (or the test's). */
  channels: readonly ChannelDescriptor[];
  logHub: LogHub;
  tools: ToolCatalog;
  /** The MCP servers of this process and their tools (config `mcp.servers`). */
  mcp: McpHub;
  sessionTools: SessionTools;
  config: Readonly<Config>;
  configFile: string | null;
  logger: Logger;
  lifecycle: Lifecycle;
  readiness: ReadinessCheck[];
  database: Database;
  models: Models;
  store: TurnStore;
  drivers: Drivers;
  routing: RoutingService;
  turns: TurnService;
  pickup: PickupWatch;
  /** A chat channel's mid-turn policy when its workflow sets none (config `channels.<name>.mid_turn`). */
  midTurnDefault: ChannelPolicyDefault;
  /** Knowledge collections: `collections` for the workflow service, `passagesFor` for turns. */
  knowledge: KnowledgeService;
  /** This process's metrics (null: `metrics.enabled` is false). */
  metrics: HubMetrics | null;
  /** This process's traces (null: no `traces.otlp_url`). */
  tracing: Tracing | null;
  /** Turns taken in here, until their first answer is delivered (stage metrics, the `deliver` span). */
  arrivals: TurnArrivals;
  /** The port of the metrics listener of its own, once it listens. */
  metricsPort: number | null;
  /** The audit trail's batched writer (confirmations in the worker; keys, users, SAML, workflows in the API). */
  audit: AuditLog;
  /** Approvals by the right people (issue 30): the worker opens and times them out, API processes count clicks. */
  approvals: ApprovalService;
  /** Chat platform users bound to hub users (issue 30): their clicks count as that hub user's. */
  identities: PlatformIdentities;
  /** Daily token budgets, checked when a worker starts a turn. */
  budgets: DailyBudgets;
}
