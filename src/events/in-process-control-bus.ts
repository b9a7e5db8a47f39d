import { EventEmitter } from 'node:events';
import type { ControlBus, ControlMessage, Unsubscribe } from '../core/turns';

/** The embedded control bus: API and worker share one process. */
export class InProcessControlBus implements ControlBus {
  readonly name = 'in-process' as const;
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  async publish(message: ControlMessage): Promise<void> {
    // Asynchronous like the Redis bus, so callers cannot come to rely on synchronous delivery.
    queueMicrotask(() => this.emitter.emit('message', message));
  }

  async subscribe(listener: (message: ControlMessage) => void): Promise<Unsubscribe> {
    this.emitter.on('message', listener);
    return () => this.emitter.off('message', listener);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
