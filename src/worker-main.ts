/** `npm run worker`: a process that only runs turns, taken from Redis (needs SERVICE_REDIS_URL). */
import { runProcess, startWorkerProcess } from './main';

void runProcess(startWorkerProcess);
