import jwt from 'jsonwebtoken';
import { openDatabase, type Database } from '../../src/db/database';
import { createLogger } from '../../src/logs/logger';
import { startService, type RunningService } from '../../src/main';
import { TEST_JWT_SECRET, testEnv } from './env';
import { jsonBody, request, type JsonResponse } from './http';
import { LogCapture } from './log-capture';
import { makeTempDir } from './temp-dir';

/** Rate limits high enough that auth suites (many registrations, logins) never meet them. */
export const GENEROUS_RATE_LIMITS = {
  SERVICE_RATE_LIMIT_AUTH_REGISTER: '100000/minute',
  SERVICE_RATE_LIMIT_AUTH_LOGIN: '100000/minute',
  SERVICE_RATE_LIMIT_AUTH_REFRESH: '100000/minute',
  SERVICE_RATE_LIMIT_SAML_ACS: '100000/minute',
  SERVICE_RATE_LIMIT_DEFAULT: '100000/minute',
};

export interface AuthService {
  service: RunningService;
  /** http://127.0.0.1:<port>/api/v1 */
  api: string;
  logs: LogCapture;
  /** A second connection to the same database, for setting up states the API cannot (expiry). */
  database: Database;
  close(): Promise<void>;
}

/** The whole hub (src/main.ts) on a loopback port with captured logs; SQLite unless a PG URL is given. */
export async function startAuthService(options: { databaseUrl?: string; env?: Record<string, string> } = {}): Promise<AuthService> {
  const dataDir = makeTempDir();
  const logs = new LogCapture();
  const env = testEnv(dataDir, {
    ...GENEROUS_RATE_LIMITS,
    SERVICE_LOG_LEVEL: 'debug',
    ...(options.databaseUrl ? { SERVICE_DATABASE_URL: options.databaseUrl } : {}),
    ...options.env,
  });
  const service = await startService({ env, cwd: makeTempDir(), logDestination: logs });
  const quiet = createLogger({ level: 'warn', format: 'json', name: 'test', destination: logs });
  const database = await openDatabase({ data_dir: dataDir, database: { url: options.databaseUrl ?? null, pool_max: 2 } }, quiet);
  return {
    service,
    api: `http://127.0.0.1:${service.port}/api/v1`,
    logs,
    database,
    close: async () => {
      await database.close();
      await service.stop();
    },
  };
}

let counter = 0;
/** A fresh, valid registration body. */
export function newUser(prefix = 'user'): { username: string; email: string; password: string } {
  counter += 1;
  const name = `${prefix}_${process.pid}_${counter}`;
  return { username: name, email: `${name}@example.com`, password: `pw-${name}-long-enough` };
}

export async function register(api: string, body = newUser()): Promise<JsonResponse> {
  return request(`${api}/auth/register`, jsonBody(body));
}

export function bearer(token: string, extra: Record<string, string> = {}): RequestInit {
  return { headers: { authorization: `Bearer ${token}`, ...extra } };
}

/** Signs a JWT with arbitrary claims and options, for the refusal matrix. */
export function signTestJwt(claims: Record<string, unknown>, options: jwt.SignOptions = {}, secret: jwt.Secret = TEST_JWT_SECRET): string {
  return jwt.sign(claims, secret, { algorithm: 'HS256', ...options });
}
