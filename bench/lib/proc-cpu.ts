import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux x86 and arm). */
export const TICKS_PER_SECOND = 100;

/** User and system clock ticks of a `/proc/…/stat` line: the fields after the command name, which may contain spaces. */
function ticksOf(stat: string): { user: number; system: number } {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]), system: Number(fields[12]) };
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat — the operating
 * system's own accounting, readable from outside the process. 0 when the process is gone.
 */
export function processCpuSeconds(pid: number): number {
  try {
    const { user, system } = ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return (user + system) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Sum of `processCpuSeconds` over several pids. */
export function cpuSecondsOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
}

/** One thread's CPU so far (clock ticks, user and system apart) and the system call it waits in now. */
export interface ThreadCpu {
  tid: number;
  userTicks: number;
  systemTicks: number;
  /** `/proc/<pid>/task/<tid>/syscall`'s number (epoll_pwait for an event loop, futex for a pool thread; -1 running). */
  waitingIn: number;
}

/** Every thread of a process, by thread id (creation order, until ids wrap around); none when the process is gone. */
export function threadCpu(pid: number): ThreadCpu[] {
  let tids: number[];
  try {
    tids = readdirSync(`/proc/${pid}/task`)
      .map(Number)
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
  const threads: ThreadCpu[] = [];
  for (const tid of tids) {
    try {
      const { user, system } = ticksOf(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      const syscall = readFileSync(`/proc/${pid}/task/${tid}/syscall`, 'utf8').trim().split(' ')[0]!;
      threads.push({ tid, userTicks: user, systemTicks: system, waitingIn: syscall === 'running' ? -1 : Number(syscall) });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}
