import { Router, type RequestHandler } from 'express';

/** `/sessions/:id` → `sessions`; a path whose first segment is a parameter or pattern has none. */
const FIRST_LITERAL_SEGMENT = /^\/([A-Za-z0-9_.~-]+)(?=\/|$)/;
/** Path syntax whose match can span a varying number of segments (wildcards, optional groups). */
const VARIABLE_LENGTH = /[*?{}()]/;

/**
 * A request path's key: its first segment, lower-cased (express matches paths case-insensitively),
 * and how many segments it has (one trailing slash ignored, as express's non-strict match does).
 */
function requestKey(path: string): string {
  const end = path.indexOf('/', 1);
  const first = (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
  let slashes = 0;
  const last = path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length;
  for (let index = 0; index < last; index += 1) if (path.charCodeAt(index) === 47) slashes += 1;
  return `${first}/${slashes}`;
}

/**
 * Routes grouped by the first segment of their path and their number of segments
 * (`/sessions/:id/messages` → `sessions/3`), a router each, chosen by a map lookup: a request is
 * tested against the few routes that could match it, not against every route registered before
 * its own. A parameter matches one non-empty segment, so two paths with a different first segment
 * or a different length never match the same request, and the order that matters is kept.
 * Nothing is mounted: routes keep their whole path.
 */
export class SegmentRoutes {
  private readonly byKey = new Map<string, Router>();
  /** Routes whose path starts with a parameter or can span several lengths (none today): tested after. */
  private readonly unsegmented = Router();

  /** The router an express path goes on. */
  routerFor(expressPath: string): Router {
    const segment = FIRST_LITERAL_SEGMENT.exec(expressPath);
    if (!segment || VARIABLE_LENGTH.test(expressPath)) return this.unsegmented;
    const key = requestKey(expressPath);
    let router = this.byKey.get(key);
    if (!router) this.byKey.set(key, (router = Router()));
    return router;
  }

  /** The handlers that dispatch a request to its group's routes, then to the unsegmented ones. */
  handlers(): RequestHandler[] {
    const byKey = this.byKey;
    const dispatch: RequestHandler = (req, res, next) => {
      const router = byKey.get(requestKey(req.path));
      if (router) router(req, res, next);
      else next();
    };
    return [dispatch, this.unsegmented];
  }
}
