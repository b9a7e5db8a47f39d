import { ERROR_CODES } from '../../src/protocol/error-codes';
import { cell, code, generatedBanner, table } from './markdown';
import type { OpenApiDocument, Operation, SchemaObject } from './openapi-document';

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];

const ACCESS_TEXT: Record<string, string> = {
  public: 'public (no credential)',
  user: 'any signed-in user (JWT or API key)',
  admin: 'admins only',
};

/** The anchor of an operation's section: `post-api-v1-sessions-id-messages`. */
export function operationAnchor(method: string, path: string): string {
  return `${method}-${path}`
    .toLowerCase()
    .replace(/[{}]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function schemaAnchor(name: string): string {
  return `schema-${name.toLowerCase()}`;
}

/** A short type expression: `string`, `integer`, `Session`, `list of Message`, `"a" | "b"`. */
export function typeOf(schema: SchemaObject | undefined): string {
  if (!schema) return 'any';
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop()!;
    return `[${name}](#${schemaAnchor(name)})`;
  }
  if (schema.const !== undefined) return code(JSON.stringify(schema.const));
  if (schema.enum) return schema.enum.map((value) => code(JSON.stringify(value))).join(' \\| ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.map(typeOf).join(' or ');
  if (schema.allOf) return schema.allOf.map(typeOf).join(' and ');
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.includes('array')) return `list of ${typeOf(schema.items)}`;
  if (types.length === 0) return schema.properties ? 'object' : 'any';
  const base = types.join(' or ');
  return schema.format ? `${base} (${schema.format})` : base;
}

function constraints(schema: SchemaObject): string {
  const notes: string[] = [];
  if (schema.minLength !== undefined || schema.maxLength !== undefined) notes.push(`${schema.minLength ?? 0}–${schema.maxLength ?? '∞'} characters`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) notes.push(`${schema.minimum ?? '−∞'}–${schema.maximum ?? '∞'}`);
  if (schema.pattern) notes.push(`pattern ${code(schema.pattern)}`);
  if (schema.default !== undefined) notes.push(`default ${code(JSON.stringify(schema.default))}`);
  return notes.join('; ');
}

function fieldsTable(schema: SchemaObject, components: Record<string, SchemaObject>): string | null {
  const resolved = schema.$ref ? components[schema.$ref.split('/').pop()!] : schema;
  if (!resolved?.properties) return null;
  const required = new Set(resolved.required ?? []);
  return table(
    ['Field', 'Type', 'Required', 'Notes'],
    Object.entries(resolved.properties).map(([name, property]) => [
      code(name),
      typeOf(property),
      required.has(name) ? 'yes' : 'no',
      cell([property.description, constraints(property)].filter(Boolean).join('. ')),
    ]),
  );
}

/** The error codes an operation documents (`Error: A, B`), in the order of the closed set. */
function errorCodes(operation: Operation): string[] {
  const named = new Set<string>();
  for (const response of Object.values(operation.responses ?? {})) {
    const match = /^Error: (.+)$/.exec(response.description ?? '');
    if (match) for (const name of match[1]!.split(/,\s*/)) named.add(name.trim());
  }
  for (const name of named)
    if (!(ERROR_CODES as readonly string[]).includes(name)) throw new Error(`docs generator: the OpenAPI document names an unknown error code ${name}`);
  return ERROR_CODES.filter((name) => named.has(name));
}

function successResponse(operation: Operation): { status: string; description: string; data: SchemaObject | undefined } | null {
  const entry = Object.entries(operation.responses ?? {}).find(([status]) => /^2\d\d$/.test(status));
  if (!entry) return null;
  const [status, response] = entry;
  const schema = Object.values(response.content ?? {})[0]?.schema;
  return { status, description: response.description ?? '', data: schema?.properties?.data ?? schema };
}

function operationSection(method: string, path: string, operation: Operation, components: Record<string, SchemaObject>): string {
  const access = (operation as Record<string, unknown>)['x-access'] as string | undefined;
  const lines = [`### ${method.toUpperCase()} ${code(path)} {#${operationAnchor(method, path)}}`, '', cell(operation.summary ?? '')];
  if (operation.description) lines.push('', cell(operation.description));
  lines.push('', `**Access**: ${access ? (ACCESS_TEXT[access] ?? access) : operation.security?.length ? 'signed in' : 'public'}`, '');
  const parameters = operation.parameters ?? [];
  if (parameters.length > 0) {
    lines.push(
      table(
        ['Parameter', 'In', 'Type', 'Required', 'Notes'],
        parameters.map((parameter) => [
          code(parameter.name),
          parameter.in,
          typeOf(parameter.schema),
          parameter.required ? 'yes' : 'no',
          cell([parameter.description, parameter.schema ? constraints(parameter.schema) : ''].filter(Boolean).join('. ')),
        ]),
      ),
      '',
    );
  }
  for (const [mediaType, content] of Object.entries(operation.requestBody?.content ?? {})) {
    lines.push(`Request body (${code(mediaType)}):`, '');
    lines.push(content.schema ? (fieldsTable(content.schema, components) ?? typeOf(content.schema)) : 'any', '');
  }
  const success = successResponse(operation);
  if (success) lines.push(`**${success.status}**: ${cell(success.description)}${success.data ? ` \`data\`: ${typeOf(success.data)}` : ''}`, '');
  const errors = errorCodes(operation);
  if (errors.length > 0) lines.push(`**Errors**: ${errors.map((name) => `[\`${name}\`](./errors.md)`).join(', ')}`, '');
  return lines.join('\n');
}

export function restReferencePage(document: OpenApiDocument): string {
  const components = document.components?.schemas ?? {};
  const byTag = new Map<string, { method: string; path: string; operation: Operation }[]>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of METHOD_ORDER) {
      const operation = operations[method];
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), { method, path, operation }]);
    }
  }
  const count = [...byTag.values()].reduce((sum, list) => sum + list.length, 0);
  const parts = [
    generatedBanner('the OpenAPI document a hub serves at /api/v1/openapi.json (built from the endpoint declarations in src/api/routes/)'),
    '# REST API',
    '',
    `${document.info.title} ${document.info.version}, OpenAPI ${document.openapi}: ${count} operations. A running hub serves the same`,
    'document at `/api/v1/openapi.json` and lets you try every call at [`/api/v1/docs`](http://localhost:8000/api/v1/docs)',
    '(Swagger UI, on your hub). Every JSON answer is the envelope `{data, error, meta}`; failures carry one of the',
    '[error codes](./errors.md). Authenticate with `Authorization: Bearer <access token or svc_live_ key>` or `X-API-Key`.',
    'Lists are paged: `?cursor=&limit=` (1–100, default 20) → `{items, next_cursor, has_more, total}`.',
    '',
  ];
  for (const [tag, operations] of byTag) {
    parts.push(`## ${tag.charAt(0).toUpperCase()}${tag.slice(1)} {#tag-${tag}}`, '');
    parts.push(
      table(
        ['Method', 'Path', 'Access', 'Does'],
        operations.map(({ method, path, operation }) => [
          method.toUpperCase(),
          `[${code(path)}](#${operationAnchor(method, path)})`,
          String((operation as Record<string, unknown>)['x-access'] ?? (operation.security?.length ? 'user' : 'public')),
          cell(operation.summary ?? ''),
        ]),
      ),
      '',
    );
    for (const { method, path, operation } of operations) parts.push(operationSection(method, path, operation, components));
  }
  parts.push('## Schemas', '', 'The objects the operations above exchange, as the OpenAPI document names them.', '');
  for (const [name, schema] of Object.entries(components).sort(([a], [b]) => a.localeCompare(b))) {
    parts.push(`### ${name} {#${schemaAnchor(name)}}`, '');
    if (schema.description) parts.push(cell(schema.description), '');
    parts.push(fieldsTable(schema, components) ?? `Type: ${typeOf(schema)}`, '');
  }
  return parts.join('\n');
}
