import type { RateLimitKey } from '../core/principal';

/** Bucket template shared by every request that matches no declared endpoint (docs, 404s, 405s). */
export const UNMATCHED_ROUTE = '*';

export interface RouteMatch {
  key: RateLimitKey;
  /** `POST /api/v1/auth/login`, or UNMATCHED_ROUTE. */
  template: string;
}

interface Route extends RouteMatch {
  pattern: RegExp;
}

/**
 * Which declared endpoint a request is for, decided before routing so that one middleware counts
 * every request exactly once (and before its body is read). Matches like express's router does
 * (first registered wins, case-insensitive, optional trailing slash, `{param}` is one path segment;
 * HEAD is served by GET). Anything else shares UNMATCHED_ROUTE, so unknown paths cannot mint buckets.
 */
export class RouteTable {
  private readonly byMethod = new Map<string, Route[]>();
  private readonly prefixes: { prefix: string; key: RateLimitKey; template: string }[] = [];

  add(method: string, prefix: string, path: string, key: RateLimitKey): void {
    const upper = method.toUpperCase();
    const route: Route = { key, template: `${upper} ${prefix}${path}`, pattern: compileTemplate(prefix + path) };
    const routes = this.byMethod.get(upper) ?? [];
    routes.push(route);
    this.byMethod.set(upper, routes);
  }

  /** Every request under `prefix` (any method): a mounted handler with paths of its own (a webhook receiver). */
  addPrefix(prefix: string, key: RateLimitKey): void {
    this.prefixes.push({ prefix: prefix.toLowerCase(), key, template: `* ${prefix}/*` });
  }

  match(method: string, pathname: string): RouteMatch {
    const lower = pathname.toLowerCase();
    for (const entry of this.prefixes) {
      if (lower === entry.prefix || lower.startsWith(`${entry.prefix}/`)) return { key: entry.key, template: entry.template };
    }
    const upper = method.toUpperCase();
    const routes = this.byMethod.get(upper === 'HEAD' ? 'GET' : upper) ?? [];
    for (const route of routes) {
      if (route.pattern.test(pathname)) return { key: route.key, template: route.template };
    }
    return { key: 'default', template: UNMATCHED_ROUTE };
  }
}

/** `/api/v1/sessions/{id}` → /^\/api\/v1\/sessions\/[^/]+\/?$/i */
function compileTemplate(template: string): RegExp {
  const source = template
    .split(/(\{[A-Za-z0-9_]+\})/)
    .map((part) => (/^\{[A-Za-z0-9_]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}\\/?$`, 'i');
}
