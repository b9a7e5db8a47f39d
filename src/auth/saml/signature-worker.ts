import type { CacheProvider, Profile, SamlConfig } from '@node-saml/node-saml';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../core/errors';
import { SAML_VERIFIER_HEAP_MB, SAML_VERIFY_MAX_PENDING, SAML_VERIFY_TIMEOUT_MS } from './limits';

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
}

const DEFAULT_LIMITS: VerifierLimits = { timeoutMs: SAML_VERIFY_TIMEOUT_MS, maxPending: SAML_VERIFY_MAX_PENDING, maxHeapMb: SAML_VERIFIER_HEAP_MB };

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

interface Pending {
  resolve(result: VerifiedResponse): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** A refusal of the response itself (the reason is for the log, never for the client). */
export class SamlResponseRefused extends Error {}

/**
 * Checks SAML responses in a worker thread, so the XML signature work of a large (or hostile)
 * response never blocks the event loop that serves every other request. One long-lived worker,
 * started on first use; a check that runs past the timeout stops it (it restarts on the next call).
 */
export class SamlSignatureWorker {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private lastId = 0;

  constructor(
    private readonly options: VerifierOptions,
    private readonly cache: CacheProvider,
    private readonly limits: VerifierLimits = DEFAULT_LIMITS,
  ) {}

  /** Resolves with node-saml's result; rejects with SamlResponseRefused, or AppError 503 when saturated. */
  verify(samlResponse: string): Promise<VerifiedResponse> {
    if (this.pending.size >= this.limits.maxPending) {
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', 'Too many SAML logins are being checked at once; try again in a moment.', { headers: { 'Retry-After': '5' } }),
      );
    }
    const worker = this.worker ?? this.start();
    this.lastId += 1;
    const id = this.lastId;
    return new Promise<VerifiedResponse>((resolve, reject) => {
      const timer = setTimeout(() => this.stop(new SamlResponseRefused(`the signature check took longer than ${this.limits.timeoutMs} ms`)), this.limits.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ kind: 'verify', id, samlResponse });
    });
  }

  /** Stops the worker (at shutdown); checks still running are refused. */
  async close(): Promise<void> {
    await this.stop(new SamlResponseRefused('the service is shutting down'));
  }

  private start(): Worker {
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
    worker.on('message', (message: FromWorker) => this.onMessage(worker, message));
    worker.on('error', (error) => void this.stop(new SamlResponseRefused(`the signature worker failed: ${error.message}`), worker));
    worker.on('exit', (code) => void this.stop(new SamlResponseRefused(`the signature worker stopped (exit ${code})`), worker));
    this.worker = worker;
    return worker;
  }

  private onMessage(worker: Worker, message: FromWorker): void {
    if (message.kind === 'cache') {
      const method = this.cache[message.method].bind(this.cache) as (...args: string[]) => Promise<unknown>;
      method(...message.args).then(
        (value) => worker.postMessage({ kind: 'cache-reply', id: message.id, ok: true, value }),
        (error: Error) => worker.postMessage({ kind: 'cache-reply', id: message.id, ok: false, error: error.message }),
      );
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    clearTimeout(pending.timer);
    if (!message.ok) return pending.reject(new SamlResponseRefused(message.reason));
    const { assertion, ...fields } = message.profile ?? { assertion: null };
    const profile = message.profile ? ({ ...fields, getAssertion: () => assertion } as unknown as Profile) : null;
    pending.resolve({ profile, loggedOut: message.loggedOut });
  }

  /** Refuses every pending check and terminates `worker` (the current one by default). */
  private async stop(reason: Error, worker: Worker | null = this.worker): Promise<void> {
    if (!worker || worker !== this.worker) return;
    this.worker = null;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(reason);
      this.pending.delete(id);
    }
    await worker.terminate();
  }
}
