import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux x86 and arm). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat — the operating
 * system's own accounting, readable from outside the process. 0 when the process is gone.
 */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const userTicks = Number(fields[11]);
    const systemTicks = Number(fields[12]);
    return (userTicks + systemTicks) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Sum of `processCpuSeconds` over several pids. */
export function cpuSecondsOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
}
