import type { Redis } from 'ioredis';
import type { ControlBus, ControlMessage, Unsubscribe } from '../core/turns';
import { onSubscriberResumed, redisKey } from '../redis/connection';

/** Control messages between processes over Redis pub/sub (one channel per hub). */
export class RedisControlBus implements ControlBus {
  readonly name = 'redis' as const;
  private readonly channel: string;
  private readonly listeners = new Set<(message: ControlMessage) => void>();
  private readonly gaps = new Set<() => void>();
  private subscribed: Promise<unknown> | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly subscriber: Redis,
    prefix: string,
  ) {
    this.channel = redisKey(prefix, 'control');
    onSubscriberResumed(subscriber, () => {
      for (const onGap of this.gaps) onGap();
    });
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const parsed = JSON.parse(message) as ControlMessage;
      for (const listener of this.listeners) listener(parsed);
    });
  }

  async publish(message: ControlMessage): Promise<void> {
    await this.redis.publish(this.channel, JSON.stringify(message));
  }

  async subscribe(listener: (message: ControlMessage) => void, onGap?: () => void): Promise<Unsubscribe> {
    this.subscribed ??= this.subscriber.subscribe(this.channel);
    await this.subscribed;
    this.listeners.add(listener);
    if (onGap) this.gaps.add(onGap);
    return () => {
      this.listeners.delete(listener);
      if (onGap) this.gaps.delete(onGap);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.gaps.clear();
  }
}
