/**
 * The hub `switchboard workflows test` runs its cases on, composed in the CLI's process: the real
 * core (config defaults, a temporary SQLite, in-process queue and event log, router, tools), the
 * session hub and an embedded worker, with the scripted (or recorded / replayed) model. No
 * listener, no channels, no Redis.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LlmProvider } from '../agent/provider';
import { createProvider } from '../agent/providers';
import type { TestCase } from '../workflows/testing/case-schema';
import { HubTarget } from '../workflows/testing/hub-target';
import { readTape, RecordingModel, ReplayModel, writeTape } from '../workflows/testing/model-tapes';
import { ScriptedModel } from '../workflows/testing/scripted-model';
import type { LocalTargetOptions } from '../workflows/testing/local-target';
import type { CaseTarget } from '../workflows/testing/target';
import { describeSyncErrors, WorkflowsRefusedError } from '../workflows/testing/local-target';
import { composeHub } from './hub';
import { startCore } from './core';
import { stopAll } from './shutdown';
import { startWorker } from './worker';

/** The SERVICE_* variables a recording run takes from the caller's environment: the model's, nothing else. */
const MODEL_ENV = ['SERVICE_LLM_PROVIDER', 'SERVICE_LLM_BASE_URL', 'SERVICE_LLM_API_KEY', 'SERVICE_LLM_MODEL', 'SERVICE_LLM_CONTEXT_WINDOW'];

export async function startWorkflowTestHub(options: LocalTargetOptions): Promise<CaseTarget> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchboard-workflow-tests-'));
  const defaults = path.join(dataDir, 'config.yaml');
  await writeFile(defaults, '# The built-in defaults (switchboard workflows test without --config).\n{}\n');
  const env: Record<string, string | undefined> = {
    SERVICE_JWT_SECRET: randomBytes(32).toString('hex'),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_LOG_LEVEL: 'warn',
    // Whatever a --config file says: the test hub's own SQLite, in-process drivers, nothing exported.
    SERVICE_DATABASE_URL: '',
    SERVICE_REDIS_URL: '',
    SERVICE_SHARED_STORE_URL: '',
    SERVICE_METRICS_ENABLED: 'false',
    SERVICE_TRACES_OTLP_URL: '',
    // Without --config, the built-in defaults: a config.yaml in the working directory is not read.
    SERVICE_CONFIG_FILE: options.configFile ? path.resolve(options.configFile) : defaults,
  };
  if (options.model.kind === 'record') for (const name of MODEL_ENV) env[name] = options.env[name];
  const core = await startCore({ env, cwd: dataDir, logDestination: { write: () => undefined } }, 'api');
  const closeAll = async () => {
    await stopAll(core.lifecycle, core.logger);
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const model = await modelFor(options, () => createProvider(core.config.llm));
    const parts = await composeHub(core, model.provider);
    await startWorker(core, model.provider);
    // Linked knowledge collections exist, empty, so the workflows validate (knowledge_search finds nothing).
    for (const name of linkedCollections(options)) await core.knowledge.createCollection(name);
    const synced = await parts.workflows.sync(
      options.workflows.map((entry) => entry.workflow),
      { prune: false, dryRun: false },
    );
    if (synced.errors.length > 0) throw new WorkflowsRefusedError(describeSyncErrors(synced.errors, options.workflows));
    return new HubTarget({
      routing: core.routing,
      hub: parts.hub,
      models: core.models,
      channels: core.channels,
      prepareModel: model.prepare,
      description: `offline: ${model.description}, a temporary SQLite, ${synced.created.length} workflow(s)`,
      close: async () => {
        await model.finish();
        await closeAll();
      },
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** The `knowledge_base_ids` the workflow files name (ids or names), once each. */
function linkedCollections(options: LocalTargetOptions): string[] {
  const linked = options.workflows.flatMap((entry) => (Array.isArray(entry.workflow.knowledge_base_ids) ? entry.workflow.knowledge_base_ids : []));
  return [...new Set(linked.filter((value): value is string => typeof value === 'string' && value.length > 0 && value.length <= 128))];
}

interface CaseModel {
  provider: LlmProvider;
  prepare(testCase: TestCase): void;
  finish(): Promise<void>;
  description: string;
}

async function modelFor(options: LocalTargetOptions, real: () => LlmProvider): Promise<CaseModel> {
  const { model } = options;
  switch (model.kind) {
    case 'scripted': {
      const scripted = new ScriptedModel();
      return { provider: scripted, prepare: (testCase) => scripted.use(testCase), finish: async () => undefined, description: 'the scripted model' };
    }
    case 'record': {
      const recording = new RecordingModel(real());
      return {
        provider: recording,
        prepare: (testCase) => recording.use(testCase.id),
        finish: () => writeTape(model.file, recording.tape),
        description: `the configured model (${recording.tape.model}), recorded to ${model.file}`,
      };
    }
    case 'replay': {
      const replay = new ReplayModel(await readTape(model.file), model.file);
      return {
        provider: replay,
        prepare: (testCase) => replay.use(testCase.id),
        finish: async () => undefined,
        description: `the model replayed from ${model.file}`,
      };
    }
  }
}
