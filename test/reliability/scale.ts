/**
 * One switch for the reliability suite's size. `npm test` (and CI) runs every reliability file at its
 * short size; `npm run test:reliability` sets RELIABILITY_FULL=1 and runs the figures the README
 * publishes (10,000+ fuzz cases, 100 chaos turns, a 10-minute soak).
 */
export const FULL_RUN = process.env.RELIABILITY_FULL === '1';

/** `short` in `npm test`, `full` under `npm run test:reliability`. */
export function scaled<T>(short: T, full: T): T {
  return FULL_RUN ? full : short;
}
