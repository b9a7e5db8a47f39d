import type { CacheProvider, Profile, SamlConfig } from '@node-saml/node-saml';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../core/errors';
import { SAML_VERIFIER_HEAP_MB, SAML_VERIFY_MAX_PENDING, SAML_VERIFY_TIMEOUT_MS, SAML_VERIFY_WORKERS } from './limits';

/** node-saml's options that travel to the worker: plain data only (no cache provider, no signing key). */
export type VerifierOptions = Omit<SamlConfig, 'cacheProvider' | 'privateKey' | 'decryptionPvk'>;

export interface VerifiedResponse {
  /** node-saml's profile, with `getAssertion()` (the parsed signed assertion) rebuilt on this side. */
  profile: Profile | null;
  loggedOut: boolean;
}

export interface VerifierLimits {
  timeoutMs: number;
  maxPending: number;
  maxHeapMb: number;
  /** Worker threads, each checking one response at a time (default SAML_VERIFY_WORKERS). */
  workers?: number;
}

const DEFAULT_LIMITS: VerifierLimits = {
  timeoutMs: SAML_VERIFY_TIMEOUT_MS,
  maxPending: SAML_VERIFY_MAX_PENDING,
  maxHeapMb: SAML_VERIFIER_HEAP_MB,
  workers: SAML_VERIFY_WORKERS,
};

/**
 * Runs in the worker thread: node-saml's whole `validatePostResponseAsync` (XML parsing, XSW
 * defences, signature, InResponseTo, validity window, audience), unchanged. Its InResponseTo cache
 * calls come back to the main thread, which owns the database.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { SAML } = require(workerData.nodeSamlPath);
const calls = new Map();
let lastCall = 0;
const cacheCall = (method, args) => new Promise((resolve, reject) => {
  lastCall += 1;
  calls.set(lastCall, { resolve, reject });
  parentPort.postMessage({ kind: 'cache', id: lastCall, method, args });
});
const saml = new SAML({
  ...workerData.options,
  cacheProvider: {
    saveAsync: (key, value) => cacheCall('saveAsync', [key, value]),
    getAsync: (key) => cacheCall('getAsync', [key]),
    removeAsync: (key) => cacheCall('removeAsync', [key]),
  },
});
const plain = (profile) => {
  if (!profile) return null;
  const copy = {};
  for (const [key, value] of Object.entries(profile)) if (typeof value !== 'function') copy[key] = value;
  copy.assertion = typeof profile.getAssertion === 'function' ? profile.getAssertion() : null;
  return copy;
};
parentPort.on('message', (message) => {
  if (message.kind === 'cache-reply') {
    const call = calls.get(message.id);
    calls.delete(message.id);
    if (call) message.ok ? call.resolve(message.value) : call.reject(new Error(message.error));
    return;
  }
  saml.validatePostResponseAsync({ SAMLResponse: message.samlResponse }).then(
    ({ profile, loggedOut }) => parentPort.postMessage({ kind: 'verified', id: message.id, ok: true, profile: plain(profile), loggedOut }),
    (error) => parentPort.postMessage({ kind: 'verified', id: message.id, ok: false, reason: String((error && error.message) || error) }),
  );
});
`;

type FromWorker =
  | { kind: 'cache'; id: number; method: 'saveAsync' | 'getAsync' | 'removeAsync'; args: [string, string] }
  | { kind: 'verified'; id: number; ok: true; profile: (Record<string, unknown> & { assertion: unknown }) | null; loggedOut: boolean }
  | { kind: 'verified'; id: number; ok: false; reason: string };

interface Check {
  id: number;
  samlResponse: string;
  resolve(result: VerifiedResponse): void;
  reject(error: Error): void;
}

/** A worker thread and the one check it runs (null while idle). */
interface Slot {
  worker: Worker;
  check: Check | null;
  timer: NodeJS.Timeout | null;
}

/** A refusal of the response itself (the reason is for the log, never for the client). */
export class SamlResponseRefused extends Error {}

/**
 * Checks SAML responses in worker threads, so the XML signature work of a large (or hostile)
 * response never blocks the event loop that serves every other request. A small pool (started on
 * first use), each worker checking one response at a time from one queue. A check that runs past
 * the timeout is refused alone: its worker is stopped and replaced, and the checks queued behind it
 * go on to the other workers or the replacement — one slow response never refuses genuine logins.
 */
export class SamlSignatureWorker {
  private readonly slots = new Set<Slot>();
  private readonly queue: Check[] = [];
  private lastId = 0;
  private closed = false;

  constructor(
    private readonly options: VerifierOptions,
    private readonly cache: CacheProvider,
    private readonly limits: VerifierLimits = DEFAULT_LIMITS,
  ) {}

  /** Resolves with node-saml's result; rejects with SamlResponseRefused, or AppError 503 when saturated. */
  verify(samlResponse: string): Promise<VerifiedResponse> {
    if (this.closed) return Promise.reject(new SamlResponseRefused('the service is shutting down'));
    if (this.queue.length + this.running() >= this.limits.maxPending) {
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', 'Too many SAML logins are being checked at once; try again in a moment.', { headers: { 'Retry-After': '5' } }),
      );
    }
    this.lastId += 1;
    const id = this.lastId;
    return new Promise<VerifiedResponse>((resolve, reject) => {
      this.queue.push({ id, samlResponse, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the workers (at shutdown); checks running or waiting are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const reason = new SamlResponseRefused('the service is shutting down');
    for (const check of this.queue.splice(0)) check.reject(reason);
    await Promise.all([...this.slots].map((slot) => this.retire(slot, reason)));
  }

  private running(): number {
    let count = 0;
    for (const slot of this.slots) if (slot.check) count += 1;
    return count;
  }

  /** Hands waiting checks to idle workers, starting workers up to the pool's size. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((candidate) => candidate.check === null);
      if (!slot && this.slots.size < (this.limits.workers ?? SAML_VERIFY_WORKERS)) slot = this.start();
      if (!slot) return;
      const check = this.queue.shift()!;
      slot.check = check;
      slot.timer = setTimeout(
        () => void this.retire(slot, new SamlResponseRefused(`the signature check took longer than ${this.limits.timeoutMs} ms`)),
        this.limits.timeoutMs,
      );
      slot.worker.postMessage({ kind: 'verify', id: check.id, samlResponse: check.samlResponse });
    }
  }

  private start(): Slot {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { nodeSamlPath: require.resolve('@node-saml/node-saml'), options: this.options },
      resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb },
      stdout: true,
      stderr: true,
    });
    // node-saml may print debug output: never mixed into the hub's log (which must not see responses).
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    const slot: Slot = { worker, check: null, timer: null };
    worker.on('message', (message: FromWorker) => this.onMessage(slot, message));
    worker.on('error', (error) => void this.retire(slot, new SamlResponseRefused(`the signature worker failed: ${error.message}`)));
    worker.on('exit', (code) => void this.retire(slot, new SamlResponseRefused(`the signature worker stopped (exit ${code})`)));
    this.slots.add(slot);
    return slot;
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    if (message.kind === 'cache') {
      const method = this.cache[message.method].bind(this.cache) as (...args: string[]) => Promise<unknown>;
      method(...message.args).then(
        (value) => slot.worker.postMessage({ kind: 'cache-reply', id: message.id, ok: true, value }),
        (error: Error) => slot.worker.postMessage({ kind: 'cache-reply', id: message.id, ok: false, error: error.message }),
      );
      return;
    }
    const check = slot.check;
    if (!check || check.id !== message.id) return;
    slot.check = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    if (!message.ok) check.reject(new SamlResponseRefused(message.reason));
    else {
      const { assertion, ...fields } = message.profile ?? { assertion: null };
      const profile = message.profile ? ({ ...fields, getAssertion: () => assertion } as unknown as Profile) : null;
      check.resolve({ profile, loggedOut: message.loggedOut });
    }
    this.dispatch();
  }

  /** Refuses the slot's check (only that one), stops its worker and lets the queue go on without it. */
  private async retire(slot: Slot, reason: Error): Promise<void> {
    if (!this.slots.delete(slot)) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.check?.reject(reason);
    slot.check = null;
    if (!this.closed) this.dispatch();
    await slot.worker.terminate();
  }
}
