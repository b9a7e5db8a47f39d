import type { LlmProvider } from '../../src/agent/provider';
import type { ToolCatalog } from '../../src/agent/tool-box';
import { startService, type RunningService } from '../../src/main';
import { GENEROUS_RATE_LIMITS } from './auth-service';
import { testEnv } from './env';
import { jsonBody, request } from './http';
import { LogCapture } from './log-capture';
import { makeTempDir } from './temp-dir';
import { registerUser } from './users';
import { openSocket, type TestSocket } from './ws-client';

export interface TestHub {
  service: RunningService;
  /** http://127.0.0.1:<port>/api/v1 */
  api: string;
  dataDir: string;
  logs: LogCapture;
  /** Registers a user and opens a socket on a new session of theirs (after its on-connect state). */
  sessionSocket(username: string): Promise<{ token: string; sessionId: string; socket: TestSocket }>;
  stop(): Promise<void>;
}

/** The whole hub in this process (SQLite in a temp dir), generous rate limits, logs captured. */
export async function startTestHub(options: { provider?: LlmProvider; tools?: ToolCatalog; env?: Record<string, string> } = {}): Promise<TestHub> {
  const dataDir = makeTempDir();
  const logs = new LogCapture();
  const service = await startService({
    env: testEnv(dataDir, { ...GENEROUS_RATE_LIMITS, ...options.env }),
    cwd: makeTempDir(),
    logDestination: logs,
    provider: options.provider,
    tools: options.tools,
  });
  const api = `http://127.0.0.1:${service.port}/api/v1`;
  return {
    service,
    api,
    dataDir,
    logs,
    sessionSocket: async (username) => {
      const { token } = await registerUser(api, username);
      const headers = { authorization: `Bearer ${token}` };
      const sessionId = (await request(`${api}/sessions`, jsonBody({}, headers))).body.data.id as string;
      const socket = await openSocket(`ws://127.0.0.1:${service.port}/ws/v1/sessions/${sessionId}`, { headers });
      await socket.nextOfType('agent_state');
      return { token, sessionId, socket };
    },
    stop: () => service.stop(),
  };
}
