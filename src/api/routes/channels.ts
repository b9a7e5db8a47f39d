import { z } from 'zod';
import type { ChannelStatusBoard } from '../../server/channel-status';
import type { ApiModule } from '../app';

const channelStatusSchema = (names: readonly string[]) =>
  z
    .object({
      name: z.enum(names as [string, ...string[]]),
      enabled: z.boolean(),
      mode: z.string().meta({ description: 'How it connects: `events`/`socket` (Slack), `webhook`/`polling` (Telegram), `rest+websocket` (web)' }),
      status: z.enum(['disabled', 'starting', 'running', 'failed']),
      error: z.string().nullable().meta({ description: "The platform's reason for the last failure (never a token); null once running" }),
      last_event_at: z.string().nullable().meta({ description: 'The last inbound event from the platform (message, button click, cancel)' }),
      started_at: z.string().nullable().meta({ description: 'When the channel last became running' }),
      next_retry_at: z.string().nullable().meta({ description: 'While failed: when the next start attempt is due' }),
    })
    .meta({ id: 'ChannelStatus' });

/**
 * `GET /admin/channels`: each channel's state in this process (decisions.md, "A channel that fails"),
 * for the channels of the registry (`names`, in its order).
 */
export function channelRoutes(board: ChannelStatusBoard, names: readonly string[]): ApiModule {
  return (api) => {
    api.add({
      method: 'get',
      path: '/admin/channels',
      summary: 'Channel status: enabled, mode, running or failed (with the reason), last inbound event',
      description:
        'A failed chat channel is retried with backoff while the rest of the hub serves; it is reported here and in `/health/ready`, never a reason for readiness to fail. The state is the answering process’s own.',
      tags: ['admin'],
      access: 'admin',
      response: { status: 200, description: 'Every channel of the hub, in the registry’s order.', data: z.array(channelStatusSchema(names)) },
      handler: () => board.list(),
    });
  };
}
