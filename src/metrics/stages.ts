/**
 * The stages of a turn, in order, as `switchboard_turn_stage_seconds{stage}` measures them. Each is
 * timed where it happens, so a turn that crosses processes is measured in each:
 *
 * - `accepted`: the hub received the message → stored and queued (API process)
 * - `queued`: queued → a worker took it (the queue's wait; worker, from the job's `queuedAt`)
 * - `routed`: taken → conversation read and workflow chosen (worker)
 * - `first_token`: routed → the model's first token (worker; the model's own time to first token,
 *   `switchboard_model_first_token_seconds`, is part of it)
 * - `delivered`: the first token emitted → its frame delivered to the channel (the process that
 *   renders the channel, from the frame's `ts`)
 * - `finished`: the first token → `done` (worker)
 *
 * The hub's own share of the time to first answer (bench: hub overhead) is the first five minus the
 * model's time to first token.
 */
export const TURN_STAGES = ['accepted', 'queued', 'routed', 'first_token', 'delivered', 'finished'] as const;
export type TurnStage = (typeof TURN_STAGES)[number];
