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

  add(method: string, prefix: string, path: string, key: RateLimitKey): void {
    const upper = method.toUpperCase();
    const route: Route = { key, template: `${upper} ${prefix}${path}`, pattern: compileTemplate(prefix + path) };
    const routes = this.byMethod.get(upper) ?? [];
    routes.push(route);
    this.byMethod.set(upper, routes);
  }

  match(method: string, pathname: string): RouteMatch {
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
