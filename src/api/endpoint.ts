import './schemas/openapi-zod';
import { OpenAPIRegistry, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { z, type ZodType } from 'zod';
import { AppError, ERROR_STATUS, type ErrorCode, type FieldIssues } from '../core/errors';
import type { Principal, RateLimitKey } from '../core/principal';
import { sendData } from './envelope';
import { SegmentRoutes } from './segment-routes';
import { parameterIssues } from './middleware/input-guard';
import { errorEnvelopeSchema, successEnvelope } from './schemas/envelope';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type BodyMediaType = 'application/json' | 'application/x-www-form-urlencoded';

/** Who may call an endpoint. Anything but `public` needs an authenticator (see ApiRouterOptions). */
export type Access = 'public' | 'user' | 'admin';

export interface HandlerInput<TBody, TQuery, TParams, TAccess extends Access = Access> {
  body: TBody;
  query: TQuery;
  params: TParams;
  /** The request headers the endpoint's `headers` schema names, validated (lower-case names). */
  headers: Record<string, unknown>;
  /** The authenticated caller; `null` only on public endpoints. */
  principal: TAccess extends 'public' ? null : Principal;
  req: Request;
  res: Response;
}

/**
 * One REST endpoint: its validation, its OpenAPI description and its handler, declared together so
 * the three cannot drift apart. The handler returns `data`; the router wraps it in the envelope.
 */
export interface Endpoint<TBody = unknown, TQuery = unknown, TParams = unknown, TResult = unknown, TAccess extends Access = Access> {
  method: HttpMethod;
  /** OpenAPI-style path below /api/v1, e.g. `/sessions/{id}`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  access: TAccess;
  /** The rate-limit bucket (spec, Limits); default `default`. */
  rateLimit?: RateLimitKey;
  body?: ZodType<TBody>;
  /** How the body is encoded; default JSON. A form body needs its parser mounted (AppOptions.rawRoutes). */
  bodyMediaType?: BodyMediaType;
  /**
   * For a handler that reads its own body (no `body` schema; e.g. JSON or multipart upload): the
   * accepted media types and their schemas, for the OpenAPI document only.
   */
  documentedBodies?: Record<string, ZodType>;
  query?: ZodType<TQuery>;
  params?: ZodType<TParams>;
  /** Request headers the endpoint reads (lower-case names), validated and documented like the query. */
  headers?: z.ZodObject;
  /** The success status and the schema of `data`. */
  response: { status: number; description: string; data?: ZodType<TResult> };
  /** Error codes this endpoint can answer with, for the OpenAPI document (422, 500 etc. are implied). */
  errors?: ErrorCode[];
  /**
   * The handler writes the response itself (redirects, XML, streaming) instead of returning `data`.
   * Only the OpenAPI description then comes from `response`.
   */
  raw?: boolean;
  handler: (input: HandlerInput<TBody, TQuery, TParams, TAccess>) => Promise<TResult | Reply<TResult>> | TResult | Reply<TResult>;
}

/** A handler's answer with another success status than the endpoint's usual one (e.g. 200 vs 202). */
export class Reply<T> {
  constructor(
    readonly status: number,
    readonly data: T,
  ) {}
}

/**
 * Authenticates a request for a `user` or `admin` endpoint: returns the caller, or throws AppError
 * (401 UNAUTHORIZED / TOKEN_EXPIRED, 403 FORBIDDEN). Supplied by the auth module.
 */
export type AccessGuard = (req: Request, access: Exclude<Access, 'public'>) => Promise<Principal>;

export interface ApiRouterOptions {
  /** Checks `user` / `admin` endpoints. Registering such an endpoint without a guard is refused. */
  guard?: AccessGuard;
  /** Extra per-request middleware run before validation (e.g. rate limiting), given the endpoint. */
  before?: (endpoint: Endpoint) => RequestHandler[];
  /**
   * Answers what an endpoint's handler throws, right there (the app's error handler). Without it the
   * error travels on through `next`, and express tests every later route's path on the way (a busy
   * endpoint's 409s cost a few hundred regex matches each).
   */
  onError?: ErrorRequestHandler;
}

/** Where the API router is mounted (api/app.ts); endpoint paths are relative to it. */
const API_PATH_PREFIX = '/api/v1';

// DELETE may carry a body too (e.g. `DELETE /sessions/{id}/messages {keep_last}`); its schema makes it optional.
const METHODS_WITH_BODY = new Set<HttpMethod>(['post', 'put', 'patch', 'delete']);
// Any endpoint can meet a database or Redis that is down: 503 SERVICE_UNAVAILABLE (AppError.from).
const IMPLIED_ERRORS: ErrorCode[] = ['VALIDATION_ERROR', 'RATE_LIMIT_EXCEEDED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];

/**
 * Collects endpoints into an express router and an OpenAPI registry. Paths that exist answer other
 * methods with 405 and an `Allow` header; OPTIONS answers 204 with `Allow`.
 */
export class ApiRouter {
  readonly router = Router();
  readonly registry = new OpenAPIRegistry();
  private readonly methodsByPath = new Map<string, Set<string>>();
  /** Endpoints by their path's first segment (the lookup that finds a request's routes). */
  private readonly segments = new SegmentRoutes();

  constructor(private readonly options: ApiRouterOptions = {}) {
    this.registry.register('ErrorEnvelope', errorEnvelopeSchema);
    this.registry.registerComponent('securitySchemes', 'bearer', {
      type: 'http',
      scheme: 'bearer',
      description: 'An access JWT from POST /auth/login, or an API key `svc_live_…`.',
    });
    this.registry.registerComponent('securitySchemes', 'apiKey', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  }

  add<TBody, TQuery, TParams, TResult, TAccess extends Access>(endpoint: Endpoint<TBody, TQuery, TParams, TResult, TAccess>): this {
    if (endpoint.access !== 'public' && !this.options.guard) {
      throw new Error(`${endpoint.method.toUpperCase()} ${endpoint.path} needs an access guard, and none is configured`);
    }
    const expressPath = endpoint.path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
    // The path template names the request in the access log (`/sessions/{id}`, not the id itself).
    const template = `${API_PATH_PREFIX}${endpoint.path}`;
    const handlers: RequestHandler[] = [
      (_req, res, next) => {
        res.locals.route = template;
        next();
      },
      ...(this.options.before?.(endpoint as Endpoint) ?? []),
    ];
    const guard = this.options.guard;
    const access = endpoint.access;
    const onError = this.options.onError;
    const run = async (req: Request, res: Response) => {
      const principal = access === 'public' ? null : await guard!(req, access as Exclude<Access, 'public'>);
      const input = { ...parseInput(endpoint, req, res), principal } as HandlerInput<TBody, TQuery, TParams, TAccess>;
      const result = await endpoint.handler(input);
      if (endpoint.raw) return;
      if (result instanceof Reply) sendData(res, result.status, result.data);
      else sendData(res, endpoint.response.status, result ?? null);
    };
    handlers.push(onError ? (req, res, next) => run(req, res).catch((error: unknown) => onError(error, req, res, next)) : run);
    this.segments.routerFor(expressPath)[endpoint.method](expressPath, ...handlers);
    this.trackMethod(expressPath, endpoint.method);
    this.registry.registerPath(describe(endpoint));
    return this;
  }

  /**
   * Call once after every `add`: installs the 405/OPTIONS answers. Express runs handlers in order,
   * so these only see requests whose path matched but whose method did not.
   */
  finish(): Router {
    for (const [expressPath, methods] of this.methodsByPath) {
      const allow = [...methods].map((m) => m.toUpperCase());
      if (allow.includes('GET')) allow.push('HEAD');
      allow.push('OPTIONS');
      const allowHeader = allow.join(', ');
      this.segments.routerFor(expressPath).all(expressPath, (req, res) => {
        res.setHeader('Allow', allowHeader);
        if (req.method === 'OPTIONS') {
          res.status(204).end();
          return;
        }
        throw new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allowHeader}.`, {
          headers: { Allow: allowHeader },
          details: { allowed: allow },
        });
      });
    }
    this.router.use(...this.segments.handlers());
    return this.router;
  }

  private trackMethod(expressPath: string, method: HttpMethod): void {
    const known = this.methodsByPath.get(expressPath) ?? new Set<string>();
    known.add(method);
    this.methodsByPath.set(expressPath, known);
  }
}

function parseInput<TBody, TQuery, TParams, TAccess extends Access>(
  endpoint: Endpoint<TBody, TQuery, TParams, unknown, TAccess>,
  req: Request,
  res: Response,
): Omit<HandlerInput<TBody, TQuery, TParams>, 'principal'> {
  // Before the schemas: a NUL in a name or id would otherwise reach a database query (500).
  const nul = parameterIssues(req.params, req.query as Record<string, unknown>);
  if (nul) throw AppError.validation(nul);
  const fields: FieldIssues = {};
  const params = validate(endpoint.params, req.params, 'path.', fields);
  const query = validate(endpoint.query, req.query, 'query.', fields);
  // Headers are optional extras (no defaults): a request without them skips the schema (the hot path).
  const sent = endpoint.headers ? pickHeaders(req, endpoint.headers) : null;
  const headers = sent && Object.keys(sent).length > 0 ? validate(endpoint.headers, sent, 'header.', fields) : {};
  let body: unknown = undefined;
  if (endpoint.body && METHODS_WITH_BODY.has(endpoint.method)) {
    if (endpoint.bodyMediaType === 'application/x-www-form-urlencoded') requireForm(req);
    else requireJson(req);
    body = validate(endpoint.body, req.body, '', fields);
  }
  if (Object.keys(fields).length > 0) throw AppError.validation(fields);
  return { body: body as TBody, query: query as TQuery, params: params as TParams, headers: (headers ?? {}) as Record<string, unknown>, req, res };
}

/** The headers a schema names, as sent (a repeated header arrives joined by `, `; express does that). */
function pickHeaders(req: Request, schema: z.ZodObject): Record<string, unknown> {
  return Object.fromEntries(Object.keys(schema.shape).flatMap((name) => (req.headers[name] === undefined ? [] : [[name, req.headers[name]]])));
}

/** A body that is present must be JSON; an absent one is validated as `undefined` (→ 422 if required). */
function requireJson(req: Request): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.', {
      details: { expected: 'application/json', received: req.get('content-type') ?? null },
    });
  }
}

function requireForm(req: Request): void {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/x-www-form-urlencoded.', {
      details: { expected: 'application/x-www-form-urlencoded', received: req.get('content-type') ?? null },
    });
  }
}

function validate(schema: ZodType | undefined, value: unknown, prefix: string, fields: FieldIssues): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    // Body fields are named as sent (`username`); path and query ones get a prefix (`query.limit`).
    const name = issue.path.length > 0 ? prefix + issue.path.map(String).join('.') : prefix.slice(0, -1) || 'body';
    (fields[name] ??= []).push({ code: issue.code, message: issue.message });
  }
  return undefined;
}

function describe<TBody, TQuery, TParams, TResult, TAccess extends Access>(endpoint: Endpoint<TBody, TQuery, TParams, TResult, TAccess>): RouteConfig {
  const responses: RouteConfig['responses'] = {
    [endpoint.response.status]: endpoint.response.data
      ? {
          description: endpoint.response.description,
          content: { 'application/json': { schema: successEnvelope(endpoint.response.data) } },
        }
      : { description: endpoint.response.description },
  };
  const errorCodes = new Set<ErrorCode>([...(endpoint.errors ?? []), ...IMPLIED_ERRORS]);
  if (endpoint.access !== 'public') errorCodes.add('UNAUTHORIZED');
  if (endpoint.access === 'admin') errorCodes.add('FORBIDDEN');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  for (const [status, codes] of byStatus) {
    responses[status] = {
      description: `Error: ${codes.join(', ')}`,
      content: { 'application/json': { schema: errorEnvelopeSchema } },
    };
  }
  const request: RouteConfig['request'] = {};
  if (endpoint.params) request.params = endpoint.params as unknown as z.ZodObject;
  if (endpoint.query) request.query = endpoint.query as unknown as z.ZodObject;
  if (endpoint.headers) request.headers = endpoint.headers;
  if (endpoint.body) {
    request.body = {
      required: endpoint.method !== 'delete',
      content: { [endpoint.bodyMediaType ?? 'application/json']: { schema: endpoint.body } },
    };
  } else if (endpoint.documentedBodies) {
    request.body = {
      required: true,
      content: Object.fromEntries(Object.entries(endpoint.documentedBodies).map(([mediaType, schema]) => [mediaType, { schema }])),
    };
  }
  return {
    method: endpoint.method,
    path: `/api/v1${endpoint.path}`,
    summary: endpoint.summary,
    description: endpoint.description,
    tags: endpoint.tags,
    security: endpoint.access === 'public' ? [] : [{ bearer: [] }, { apiKey: [] }],
    // Who may call it (public, user, admin): OpenAPI has no field for roles; the docs site shows it.
    'x-access': endpoint.access,
    request,
    responses,
  };
}
