import { z } from 'zod';
import { CHANNELS } from '../../adapters';
import { ChatFollower } from '../../adapters/shared/chat-follower';
import type { ReplySurface } from '../../adapters/shared/reply-surface';
import { channelOwner, defineChannel, type ChannelAdapter, type ChannelContext } from '../../src/core/channel';
import type { Hub } from '../../src/core/hub';
import { startService } from '../../src/main';
import { ScriptedProvider } from '../fakes/scripted-provider';
import { GENEROUS_RATE_LIMITS } from '../helpers/auth-service';
import { testEnv } from '../helpers/env';
import { LogCapture } from '../helpers/log-capture';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { replySurfaceContract } from './surfaces/reply-surface-contract';

/**
 * "A throwaway chat channel written against the new surface needs only its platform calls"
 * (issue 27). `Room` stands for a platform: it can send a message and edit one, nothing else. The
 * channel below is everything a new chat channel writes to show turns: its platform calls as a
 * `ReplySurface` (two calls and its cadence), and one `follower.take` per inbound message.
 * Following the turn, streaming by edits, splitting, notes, confirmations and shutdown are the
 * shared code's.
 */
afterAll(removeTempDirs);

/** The platform: a room of messages, each sent once and editable. */
class Room {
  readonly messages: { id: string; text: string }[] = [];

  send(text: string): string {
    const id = String(this.messages.length + 1);
    this.messages.push({ id, text });
    return id;
  }

  edit(id: string, text: string): void {
    this.messages.find((message) => message.id === id)!.text = text;
  }
}

// ---- the throwaway channel: platform calls only --------------------------------------------------

function roomSurface(room: Room): ReplySurface {
  return {
    cadence: {
      editIntervalMs: 50,
      maxMessageChars: 2_000,
      failureNote: 'append',
      texts: { apology: 'Sorry, that failed.', cancelled: 'Stopped.', busy: 'One moment, still on the last one.' },
    },
    post: async (text) => void room.send(text),
    edit: {
      open: async (text) => room.send(text),
      change: async (id, text) => (room.edit(id, text), true),
    },
  };
}

class RoomAdapter implements ChannelAdapter {
  readonly name = 'room';
  readonly rooms = new Map<string, Room>();
  private hub: Hub | null = null;
  private readonly follower: ChatFollower;

  constructor(context: ChannelContext<unknown>) {
    this.follower = new ChatFollower({ channel: 'room', logger: context.logger, leases: context.renderLeases, shutdownGraceMs: 0 });
  }

  async start(hub: Hub): Promise<void> {
    this.hub = hub;
  }

  async stop(): Promise<void> {
    await this.follower.stop(() => undefined);
  }

  /** Someone said `text` in room `name`. */
  async said(name: string, text: string): Promise<void> {
    const room = this.rooms.get(name) ?? new Room();
    this.rooms.set(name, room);
    await this.follower.take(
      this.hub!,
      { channel: 'room', sessionKey: `room::${name}`, sender: { userId: channelOwner('room') }, text, mode: 'normal', metadata: {} },
      roomSurface(room),
    );
  }
}

// ---- the tests ------------------------------------------------------------------------------------

replySurfaceContract({
  name: 'a throwaway channel (post and edit only)',
  conversation() {
    const room = new Room();
    return { surface: roomSurface(room), shown: () => room.messages.map((message) => message.text), offered: () => null, showedWork: () => true };
  },
});

it('shows a turn through the whole hub with nothing but its platform calls', async () => {
  let adapter: RoomAdapter | null = null;
  const roomChannel = defineChannel<{ enabled: boolean }>({
    name: 'room',
    routingChannel: () => 'room',
    config: { schema: z.strictObject({ enabled: z.boolean().default(true) }), env: [] },
    mode: () => 'in-memory',
    create: (context) => (adapter = new RoomAdapter(context)),
  });
  const provider = new ScriptedProvider();
  const service = await startService({
    env: testEnv(makeTempDir(), GENEROUS_RATE_LIMITS),
    cwd: makeTempDir(),
    logDestination: new LogCapture(),
    provider,
    channels: [...CHANNELS, roomChannel],
  });
  try {
    await adapter!.said('lobby', 'hello');
    const room = adapter!.rooms.get('lobby')!;
    for (let waited = 0; room.messages.at(-1)?.text !== 'Hello there, friend.' && waited < 10_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(room.messages.map((message) => message.text)).toEqual(['Hello there, friend.']);
  } finally {
    await service.stop();
  }
});
