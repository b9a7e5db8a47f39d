import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService } from '../../src/main';

/** 64 hex characters: only signs tokens of the throw-away hub that serves the document. */
const THROWAWAY_JWT_SECRET = 'd0c5'.repeat(16);

/**
 * The OpenAPI document exactly as a hub serves it at `/api/v1/openapi.json`: a throw-away hub
 * (SQLite in a temp dir, loopback, ephemeral port, logging off) is started in this process, asked
 * for the document over HTTP, and stopped.
 */
export async function fetchOpenApiDocument(): Promise<OpenApiDocument> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchboard-docs-'));
  const service = await startService({
    cwd: dir,
    env: {
      SERVICE_JWT_SECRET: THROWAWAY_JWT_SECRET,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: '0',
      SERVICE_DATA_DIR: path.join(dir, 'data'),
      SERVICE_LOG_LEVEL: 'silent',
    },
  });
  try {
    const response = await fetch(`http://127.0.0.1:${service.port}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`docs generator: /api/v1/openapi.json answered ${response.status}`);
    return (await response.json()) as OpenApiDocument;
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface SchemaObject {
  type?: string | string[];
  properties?: Record<string, SchemaObject>;
  required?: string[];
  items?: SchemaObject;
  enum?: unknown[];
  anyOf?: SchemaObject[];
  oneOf?: SchemaObject[];
  allOf?: SchemaObject[];
  $ref?: string;
  description?: string;
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  const?: unknown;
  nullable?: boolean;
  additionalProperties?: boolean | SchemaObject;
}

export interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: SchemaObject }[];
  requestBody?: { content?: Record<string, { schema?: SchemaObject }>; required?: boolean };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: SchemaObject }> }>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, SchemaObject>; securitySchemes?: Record<string, unknown> };
}
