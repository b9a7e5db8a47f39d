import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Which of `candidates` (process ids) holds the TCP connection whose client side is `clientPort`
 * and whose server side is `serverPort` on this machine: the socket's inode from /proc/net/tcp,
 * then each candidate's open descriptors. Null when none does (or not on Linux).
 */
export function socketOwner(clientPort: number, serverPort: number, candidates: number[]): number | null {
  const inode = socketInode(clientPort, serverPort);
  if (inode === null) return null;
  const link = `socket:[${inode}]`;
  for (const pid of candidates) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

function socketInode(clientPort: number, serverPort: number): string | null {
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = parseInt(fields[1]!.split(':')[1]!, 16);
      const remote = parseInt(fields[2]!.split(':')[1]!, 16);
      if (local === clientPort && remote === serverPort) return fields[9]!;
    }
  }
  return null;
}

/** Resident set size of a process in bytes (VmRSS), or null once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
