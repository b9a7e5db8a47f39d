import path from 'node:path';
import { ConfigError } from '../config';
import { DOTENV_FILE, environmentWithDotEnv } from '../config/dotenv';
import { EXIT_CONFIG, type RunningService, type ServiceOptions } from './service-types';

/** Runs a process entry: start, then stop cleanly on SIGTERM/SIGINT (a second signal forces exit). */
export async function runProcess(start: (options: ServiceOptions) => Promise<RunningService>, options: Omit<ServiceOptions, 'env'> = {}): Promise<void> {
  let service: RunningService | undefined;
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    service!.logger.info({ signal }, 'shutting down');
    await service!.stop();
    service!.logger.info('stopped');
    service!.logger.flush();
    process.exit(0);
  };
  // Installed before starting: a signal that arrives during startup stops the process once it is up.
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      service?.logger.warn({ signal }, 'second signal: exiting immediately');
      process.exit(1);
    }
    stopping = true;
    if (service) void stop(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    service = await start({ ...options, env: environmentWithDotEnv(path.resolve(DOTENV_FILE)) });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchboard: configuration error: ${error.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    process.stderr.write(`switchboard: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  if (stopping) await stop('SIGTERM');
}
