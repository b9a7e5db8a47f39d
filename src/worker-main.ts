/** `npm run worker`: a process that only runs turns, taken from Redis (needs SERVICE_REDIS_URL). */
import { runProcess } from './compose/process-signals';
import { startWorkerProcess } from './compose/worker';

void runProcess(startWorkerProcess);
