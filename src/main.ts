/**
 * `npm start`: the hub's entry. It starts the composition root (`src/compose/`, where every
 * concrete part is wired) and stops it cleanly on SIGTERM/SIGINT. `src/worker-main.ts` is the
 * worker-only process's entry.
 *
 * Tests, benchmarks and the docs generator import `startService` and its types from here.
 */
import { runProcess } from './compose/process-signals';
import { startService } from './compose/service';

export { runProcess } from './compose/process-signals';
export { startService } from './compose/service';
export { EXIT_CONFIG, type RunningService, type ServiceOptions } from './compose/service-types';
export { startWorkerProcess } from './compose/worker';

if (require.main === module) void runProcess(startService);
