import { Counter, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from './buckets';

/** Seconds a person takes to answer a confirmation (the default timeout is 5 minutes). */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600];

export type AgentMetrics = ReturnType<typeof defineAgentMetrics>;

/** The model's and the tools' series: calls, first token, tokens, tool calls and confirmations. */
export function defineAgentMetrics(registers: Registry[]) {
  const modelCalls = new Counter({
    name: 'switchboard_model_calls_total',
    help: 'Calls to the model, by outcome',
    labelNames: ['model', 'outcome'],
    registers,
  });
  const modelFirstToken = new Histogram({
    name: 'switchboard_model_first_token_seconds',
    help: "The model's own time to first token (request sent → first delta)",
    labelNames: ['model'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const tokens = new Counter({
    name: 'switchboard_model_tokens_total',
    help: 'Model tokens, input (prompt) and output',
    labelNames: ['model', 'direction'],
    registers,
  });
  const toolCalls = new Counter({
    name: 'switchboard_tool_calls_total',
    help: 'Tool calls, by tool and outcome (ok, error)',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const toolDuration = new Histogram({
    name: 'switchboard_tool_duration_seconds',
    help: 'Tool calls, tool_start to tool_end (confirmation wait included)',
    labelNames: ['tool'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const confirmations = new Counter({
    name: 'switchboard_tool_confirmations_total',
    help: 'Confirmation outcomes by tool and action (the six actions, timeout, auto_approved)',
    labelNames: ['tool', 'action'],
    registers,
  });
  const confirmationWait = new Histogram({
    name: 'switchboard_tool_confirmation_wait_seconds',
    help: 'How long a confirmation waited for its answer',
    labelNames: ['tool'],
    buckets: WAIT_BUCKETS,
    registers,
  });
  return { modelCalls, modelFirstToken, tokens, toolCalls, toolDuration, confirmations, confirmationWait };
}
