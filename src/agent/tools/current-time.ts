import type { Tool } from './tool';
import { ToolError } from './tool-error';

export type CurrentTimeInput = {
  timezone?: string;
};

/** The current date and time, in UTC and in an IANA time zone (default UTC). */
export function currentTimeTool(now: () => Date = () => new Date()): Tool<CurrentTimeInput> {
  return {
    name: 'current_time',
    description: 'Get the current date and time. Optionally in an IANA time zone such as "Europe/Paris" (default UTC).',
    parameters: {
      type: 'object',
      properties: { timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. "America/New_York".' } },
      additionalProperties: false,
    },
    requiresConfirmation: false,
    web: false,
    sideEffects: false,
    availability: () => ({ ok: true }),
    async run(input) {
      const timezone = input.timezone ?? 'UTC';
      const instant = now();
      let parts: Intl.DateTimeFormatPart[];
      try {
        parts = new Intl.DateTimeFormat('en-US', {
          timeZone: timezone,
          hourCycle: 'h23',
          year: 'numeric',
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
          weekday: 'long',
          timeZoneName: 'longOffset',
        }).formatToParts(instant);
      } catch {
        throw new ToolError(`Unknown time zone "${timezone}": use an IANA name such as "Europe/Paris" or "UTC".`);
      }
      const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((candidate) => candidate.type === type)?.value ?? '';
      const offset = part('timeZoneName').replace('GMT', '') || '+00:00';
      return {
        utc: instant.toISOString(),
        timezone,
        local: `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${offset === '+00:00' ? 'Z' : offset}`,
        weekday: part('weekday'),
        utc_offset: offset,
      };
    },
  };
}
