import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { TEST_POSTGRES_URL } from '../../helpers/postgres';

/**
 * Canaries and the places they must never be: each secret a hub holds or hands out is a unique
 * random value, searched for whole and in pieces in every log line, Redis value, database row,
 * response and document the run produced.
 */
export interface Canary {
  name: string;
  value: string;
}

/** Shortest piece of a secret that counts as a leak: any 12 characters in a row (step 6: any 17 are caught). */
const WINDOW = 12;
const STEP = 6;

/** The secret itself and every 12-character window of it (a truncated or partly masked copy is still a leak). */
export function fragments(value: string): string[] {
  const pieces = new Set([value]);
  for (let start = 0; start + WINDOW <= value.length; start += STEP) pieces.add(value.slice(start, start + WINDOW));
  if (value.length > WINDOW) pieces.add(value.slice(-WINDOW));
  return [...pieces];
}

export interface Finding {
  canary: string;
  fragment: string;
  /** Up to 80 characters around the first occurrence. */
  context: string;
}

/** Every canary found in `text`, with where it stood; [] when clean. */
export function findCanaries(text: string, canaries: readonly Canary[]): Finding[] {
  const findings: Finding[] = [];
  for (const canary of canaries) {
    for (const fragment of fragments(canary.value)) {
      const at = text.indexOf(fragment);
      if (at < 0) continue;
      findings.push({ canary: canary.name, fragment, context: text.slice(Math.max(0, at - 40), at + fragment.length + 40) });
      break;
    }
  }
  return findings;
}

export interface RedisDump {
  keys: number;
  /** How many keys of each type were read (string, hash, list, set, zset, stream). */
  types: Record<string, number>;
  /** Every key and value, one per line. */
  text: string;
}

/** SCAN every key under `prefix`, and read each by its TYPE (values as UTF-8, binary kept as it is). */
export async function dumpRedis(url: string, prefix: string): Promise<RedisDump> {
  const redis = new Redis(url);
  const lines: string[] = [];
  const types: Record<string, number> = {};
  let keys = 0;
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of batch) {
        const type = await redis.type(key);
        types[type] = (types[type] ?? 0) + 1;
        keys += 1;
        lines.push(`${type} ${key} ${JSON.stringify(await readValue(redis, key, type))}`);
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { keys, types, text: lines.join('\n') };
}

async function readValue(redis: Redis, key: string, type: string): Promise<unknown> {
  const text = (values: Buffer[]) => values.map((value) => value.toString('utf8'));
  switch (type) {
    case 'string':
      return (await redis.getBuffer(key))?.toString('utf8') ?? null;
    case 'hash':
      return text(await redis.hgetallBuffer(key).then((hash) => Object.entries(hash).flatMap(([field, value]) => [Buffer.from(field), value])));
    case 'list':
      return text(await redis.lrangeBuffer(key, 0, -1));
    case 'set':
      return text(await redis.smembersBuffer(key));
    case 'zset':
      return text(await redis.zrangeBuffer(key, '0', '-1', 'WITHSCORES'));
    case 'stream':
      return (await redis.xrangeBuffer(key, '-', '+')).map(([id, fields]) => [id.toString('utf8'), ...text(fields)]);
    default:
      return `(unread type ${type})`;
  }
}

/** Every message published on a channel under `prefix` while it listens (pub/sub leaves no keys behind). */
export class RedisTap {
  readonly messages: string[] = [];
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url);
  }

  async listen(prefix: string): Promise<void> {
    this.redis.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, message: Buffer) =>
      this.messages.push(`${channel.toString('utf8')} ${message.toString('utf8')}`),
    );
    await this.redis.psubscribe(`${prefix}*`);
  }

  stop(): void {
    if (this.redis.status !== 'end') this.redis.disconnect();
  }
}

export interface DatabaseDump {
  /** Every row of every table in the public schema, by table. */
  tables: Record<string, Record<string, unknown>[]>;
  text: string;
}

/** Every row of every table (public schema), as JSON. */
export async function dumpDatabase(url: string): Promise<DatabaseDump> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const tables: Record<string, Record<string, unknown>[]> = {};
    for (const { table_name: table } of rows) tables[table] = (await client.query(`SELECT * FROM "${table}"`)).rows;
    return {
      tables,
      text: Object.entries(tables)
        .map(([table, tableRows]) => `${table} ${JSON.stringify(tableRows)}`)
        .join('\n'),
    };
  } finally {
    await client.end();
  }
}

/**
 * A throw-away database owned by a role of its own whose password is a canary, so the database URL
 * the hub is given carries a secret too (this machine's PostgreSQL trusts local connections, so the
 * password is never checked — it only has to stay out of every output).
 */
export interface PasswordDatabase {
  url: string;
  password: string;
  drop(): Promise<void>;
}

export async function createPasswordDatabase(): Promise<PasswordDatabase> {
  const suffix = randomBytes(5).toString('hex');
  const role = `switchboard_canary_${suffix}`;
  const name = `switchboard_test_secrets_${suffix}`;
  const password = `pg_${randomBytes(16).toString('hex')}`;
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${role}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.username = role;
  url.password = password;
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    password,
    drop: async () => {
      const client = new Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await client.query(`DROP ROLE IF EXISTS ${role}`);
      } finally {
        await client.end();
      }
    },
  };
}
