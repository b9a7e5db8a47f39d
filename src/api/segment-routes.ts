import { Router, type RequestHandler } from 'express';

/** `/sessions/:id` → `sessions`; a path whose first segment is a parameter or pattern has none. */
const FIRST_LITERAL_SEGMENT = /^\/([A-Za-z0-9_.~-]+)(?=\/|$)/;

/** A request path's first segment, lower-cased (express matches paths case-insensitively). */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/**
 * Routes grouped by the first segment of their path (`/sessions/…` → `sessions`), a router each,
 * chosen by a map lookup: a request is tested against its segment's routes only, not against every
 * route registered before its own. Two paths with different first segments never match the same
 * request, so the order that matters is kept. Nothing is mounted: routes keep their whole path.
 */
export class SegmentRoutes {
  private readonly bySegment = new Map<string, Router>();
  /** Routes whose path starts with a parameter (none today): tested after the segment's. */
  private readonly unsegmented = Router();

  /** The router an express path goes on. */
  routerFor(expressPath: string): Router {
    const segment = FIRST_LITERAL_SEGMENT.exec(expressPath);
    if (!segment) return this.unsegmented;
    const key = segment[1]!.toLowerCase();
    let router = this.bySegment.get(key);
    if (!router) this.bySegment.set(key, (router = Router()));
    return router;
  }

  /** The handlers that dispatch a request to its segment's routes, then to the unsegmented ones. */
  handlers(): RequestHandler[] {
    const bySegment = this.bySegment;
    const dispatch: RequestHandler = (req, res, next) => {
      const router = bySegment.get(firstSegment(req.path));
      if (router) router(req, res, next);
      else next();
    };
    return [dispatch, this.unsegmented];
  }
}
