/**
 * Process lifecycle shared by the HTTP app, the WebSocket server and the worker: whether the process
 * is draining (shutting down), and what to stop, in reverse order of starting.
 */
export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

export class Lifecycle {
  private drainingSince: number | null = null;
  private readonly stoppables: Stoppable[] = [];
  readonly startedAt = Date.now();

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** Registers something to stop on shutdown; stopped in reverse order of registration. */
  onStop(stoppable: Stoppable): void {
    this.stoppables.push(stoppable);
  }

  /** Marks the process as draining and stops everything registered, last registered first. */
  async shutdown(onError: (name: string, error: unknown) => void, onStopped?: (name: string, milliseconds: number) => void): Promise<void> {
    if (this.drainingSince !== null) return;
    this.drainingSince = Date.now();
    for (const stoppable of [...this.stoppables].reverse()) {
      const started = Date.now();
      try {
        await stoppable.stop();
        onStopped?.(stoppable.name, Date.now() - started);
      } catch (error) {
        onError(stoppable.name, error);
      }
    }
  }
}
