import fc from 'fast-check';
import { sanitizeMarkdown } from '../../../adapters/webchat/render';
import { EVENT_LOOP_BUDGET_MS, leastEventLoopDelay } from '../../helpers/event-loop';

/**
 * The webchat's Markdown sanitiser is linear (issue 26: an 80,000-character line of brackets took
 * 4.2 s), and finds exactly the links the regexes it replaced found.
 */

const SAFE_TARGET = /^(https?:\/\/|mailto:|tel:)/i;
/** The former implementation, kept here as the reference the linear one must agree with. */
function regexSanitize(text: string): string {
  return text
    .replace(/!\[(?=[^\]\n]*\]\s*[([])/g, '[')
    .replace(/\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/g, (whole, label: string, target: string) =>
      SAFE_TARGET.test(target) ? whole : label,
    )
    .replace(/<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>/g, (whole, target: string) => (SAFE_TARGET.test(target) ? whole : `\\<${target}\\>`))
    .replace(/^ {0,3}\[[^\]\n]+\]:\s*<?(\S*?)>?(?:\s.*)?$/gm, (whole, target: string) => (SAFE_TARGET.test(target) ? whole : ''));
}

const LONG = 80_000;

describe('sanitizeMarkdown cost', () => {
  it.each([
    ['[[[[…', '['.repeat(LONG)],
    ['![![![…', '!['.repeat(LONG / 2)],
    ['[a](x[a](x…', '[a](x'.repeat(LONG / 5)],
    ['![a]   ![a]   … then no (', '![a]'.repeat(LONG / 8) + ' '.repeat(LONG / 2)],
    ['[a](x   repeated targets sharing a blank run', `${'[a](x'.repeat(LONG / 10)}${' '.repeat(LONG / 2)}`],
    ['[x]( " … unterminated titles', '[x](y "'.repeat(LONG / 7)],
  ])('%s (80,000 characters) stays within the event-loop budget', async (_name, text) => {
    const { maxDelayMs } = await leastEventLoopDelay(async () => sanitizeMarkdown(text));
    expect(maxDelayMs).toBeLessThanOrEqual(EVENT_LOOP_BUDGET_MS);
  });

  it('finds the same links as the regexes it replaced', () => {
    const piece = fc.constantFrom(
      '[',
      ']',
      '(',
      ')',
      '!',
      '<',
      '>',
      '"',
      "'",
      ' ',
      '\n',
      ':',
      'a',
      'javascript:x',
      'https://e.com',
      'mailto:a@b',
      ' "t"',
      '![',
      '](',
      '][',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        expect(sanitizeMarkdown(text)).toBe(regexSanitize(text));
      }),
      { numRuns: 3_000, seed: 26 },
    );
  });
});
