import { convert } from 'html-to-text';
import { htmlNesting } from './html-nesting';
import { runOffThread, type OffThreadLimits } from './off-thread';

/**
 * HTML to readable text with html-to-text, bounded: the nesting is scanned first (linear) and a
 * document is read only down to `maxDepth` levels. Runs in a worker thread (htmlText below): a
 * fetched page or an uploaded document can be megabytes of hostile markup.
 */
export interface HtmlTextInput {
  html: string;
  /** Elements nested deeper than this end the document: what comes from there on is left out. */
  maxDepth: number;
  /** Keep link targets (`text [url]`): useful to the agent reading a page, noise in a knowledge passage. */
  keepLinks: boolean;
}

export interface HtmlTextResult {
  text: string;
  /** The document went deeper than `maxDepth`: the text stops where it did. */
  tooDeep: boolean;
}

/** Deepest nesting read. Real pages stay under ~60 levels; 200,000 nested elements cost a parser 28 s. */
export const HTML_MAX_DEPTH = 512;

/** The task, as the worker runs it (plain data in and out). */
export function convertHtml(input: HtmlTextInput): HtmlTextResult {
  const { cutAt } = htmlNesting(input.html, input.maxDepth);
  const html = cutAt === null ? input.html : input.html.slice(0, cutAt);
  const text = convert(html, {
    wordwrap: false,
    // Belt and braces: the scan above counts low; the formatter never walks deeper than the parse allows.
    limits: { maxDepth: input.maxDepth * 4 },
    selectors: [
      { selector: 'a', options: { ignoreHref: !input.keepLinks } },
      { selector: 'img', format: 'skip' },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', options: { uppercaseHeaderCells: false } },
    ],
  });
  return { text, tooDeep: cutAt !== null };
}

/** `convertHtml` in a worker thread, within `limits` (rejects with OffThreadTimeout or OffThreadFailure). */
export function htmlText(input: HtmlTextInput, limits: OffThreadLimits): Promise<HtmlTextResult> {
  return runOffThread<HtmlTextResult>(require.resolve('./html-text'), 'convertHtml', input, limits);
}
