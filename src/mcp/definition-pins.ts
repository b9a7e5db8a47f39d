import { createHash } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { canonicalJson } from '../audit/digest';

/** What is pinned of a tool's definition: its name, description and input schema. */
export interface PinnedDefinition {
  name: string;
  description?: string;
  inputSchema: unknown;
}

/** SHA-256 (hex) of the definition's canonical JSON (object keys sorted), so key order never counts as a change. */
export function definitionHash(definition: PinnedDefinition): string {
  const canonical = canonicalJson({ name: definition.name, description: definition.description ?? '', inputSchema: definition.inputSchema ?? null });
  return createHash('sha256').update(canonical).digest('hex');
}

/** The pinned hashes, shared by every process of a hub (the database). */
export interface DefinitionPinStore {
  /** tool name → pinned hash, for one server. */
  pinned(server: string): Promise<Map<string, string>>;
  /** Pins a definition seen for the first time (a pin already there stays). */
  pinIfNew(server: string, tool: string, hash: string): Promise<void>;
  /** Replaces the pin by an approved definition. */
  approve(server: string, tool: string, hash: string, approvedBy: string): Promise<void>;
}

/** The store on the hub's database (SQLite or PostgreSQL: the statements are portable). */
export class SqlDefinitionPins implements DefinitionPinStore {
  constructor(private readonly sequelize: Sequelize) {}

  async pinned(server: string): Promise<Map<string, string>> {
    const rows = await this.sequelize.query<{ tool: string; definition_hash: string }>(
      'SELECT tool, definition_hash FROM mcp_tool_pins WHERE server = :server',
      {
        replacements: { server },
        type: QueryTypes.SELECT,
      },
    );
    return new Map(rows.map((row) => [row.tool, row.definition_hash]));
  }

  async pinIfNew(server: string, tool: string, hash: string): Promise<void> {
    await this.sequelize.query(
      'INSERT INTO mcp_tool_pins (server, tool, definition_hash, approved_by, updated_at) VALUES (:server, :tool, :hash, NULL, :now) ON CONFLICT (server, tool) DO NOTHING',
      { replacements: { server, tool, hash, now: new Date() } },
    );
  }

  async approve(server: string, tool: string, hash: string, approvedBy: string): Promise<void> {
    await this.sequelize.query(
      `INSERT INTO mcp_tool_pins (server, tool, definition_hash, approved_by, updated_at) VALUES (:server, :tool, :hash, :approvedBy, :now)
       ON CONFLICT (server, tool) DO UPDATE SET definition_hash = excluded.definition_hash, approved_by = excluded.approved_by, updated_at = excluded.updated_at`,
      { replacements: { server, tool, hash, approvedBy, now: new Date() } },
    );
  }
}

/** A store in memory (a hub without a database: tests of the MCP layer alone). */
export class MemoryDefinitionPins implements DefinitionPinStore {
  private readonly pins = new Map<string, string>();
  pinned(server: string): Promise<Map<string, string>> {
    const prefix = `${server}\u0000`;
    return Promise.resolve(new Map([...this.pins].filter(([key]) => key.startsWith(prefix)).map(([key, hash]) => [key.slice(prefix.length), hash])));
  }
  pinIfNew(server: string, tool: string, hash: string): Promise<void> {
    const key = `${server}\u0000${tool}`;
    if (!this.pins.has(key)) this.pins.set(key, hash);
    return Promise.resolve();
  }
  approve(server: string, tool: string, hash: string): Promise<void> {
    this.pins.set(`${server}\u0000${tool}`, hash);
    return Promise.resolve();
  }
}
