import type { Logger } from '../logs/logger';
import type { Lifecycle } from '../server/lifecycle';

/** Stops every part of a process in reverse start order, logging what failed and how long each took. */
export function stopAll(lifecycle: Lifecycle, logger: Logger): Promise<void> {
  return lifecycle.shutdown(
    (name, error) => logger.error({ err: error, component: name }, 'error while stopping'),
    (name, milliseconds) => logger.debug({ component: name, duration_ms: milliseconds }, 'stopped'),
  );
}
