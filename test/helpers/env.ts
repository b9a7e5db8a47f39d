import { randomBytes } from 'node:crypto';

/** A valid JWT secret for tests (64 hex characters). */
export const TEST_JWT_SECRET = randomBytes(32).toString('hex');

/** The smallest environment a hub starts with, isolated in `dataDir`, on a free loopback port. */
export function testEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SERVICE_JWT_SECRET: TEST_JWT_SECRET,
    SERVICE_HOST: '127.0.0.1',
    SERVICE_PORT: '0',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_LOG_FORMAT: 'json',
    SERVICE_LOG_LEVEL: 'info',
    ...extra,
  };
}
