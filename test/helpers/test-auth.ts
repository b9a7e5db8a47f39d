import type { IncomingMessage } from 'node:http';
import { AppError } from '../../src/core/errors';
import type { Principal } from '../../src/core/principal';
import type { AuthWiring } from '../../src/main';

/**
 * TEMPORARY, until the auth branch merges: bearer tokens `test:<userId>:<role>` stand for users.
 * Replaced by real registration and login in every test once src/auth exists.
 */
export function testToken(userId: string, role: 'admin' | 'user' = 'user'): string {
  return `test.${userId}.${role}`;
}

function principalOf(token: string | undefined): Principal | null {
  const match = /^test\.([\w-]+)\.(admin|user)$/.exec(token ?? '');
  return match ? { userId: match[1]!, username: match[1]!, role: match[2] as 'admin' | 'user', via: 'jwt' } : null;
}

function bearer(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  if (header) return /^bearer\s+(.+)$/i.exec(header)?.[1];
  const protocols = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  return protocols[0]?.toLowerCase() === 'bearer' ? protocols[1] : undefined;
}

export function testAuthWiring(): AuthWiring {
  return {
    guard: async (request, access) => {
      const principal = principalOf(bearer(request));
      if (!principal) throw new AppError('UNAUTHORIZED', 'Authentication required.');
      if (access === 'admin' && principal.role !== 'admin') throw new AppError('FORBIDDEN', 'Admins only.');
      return principal;
    },
    authenticateSocket: async (request, options) => {
      const query = options.queryToken ? new URL(request.url ?? '/', 'http://x').searchParams.get('token') ?? undefined : undefined;
      const principal = principalOf(bearer(request) ?? query);
      if (!principal) return { ok: false, closeCode: 4001, reason: 'unauthorized' };
      if (options.role === 'admin' && principal.role !== 'admin') return { ok: false, closeCode: 4003, reason: 'admins only' };
      return { ok: true, principal };
    },
    selectProtocol: (protocols, request) => {
      const first = [...protocols][0];
      return !request.headers.authorization && first?.toLowerCase() === 'bearer' ? first : false;
    },
  };
}
