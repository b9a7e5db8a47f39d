/**
 * Reads a streamed answer's text chunks without parsing each one. A model server sends one JSON
 * chunk per token, and within an answer those chunks differ only in the token's text: OpenAI-style
 * `{"id":"chatcmpl-1",…,"choices":[{"index":0,"delta":{"content":"<text>"},…}]}`, Anthropic's
 * `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"<text>"}}`. Once a
 * chunk has been parsed whole, the text before and after its text string are remembered; a later
 * chunk that starts and ends with exactly those is the same chunk with another text, and its text
 * is read from between them. `JSON.parse` of each chunk was ~20 % of the hub's CPU on a long
 * real-path stream (performance.md, seventh session).
 *
 * Why it is exact: the remembered text before ends by opening a JSON string, the one after starts by
 * closing it, and what lies between is accepted only if it is a valid JSON string body (checked by
 * JSON.parse when it holds a quote, a backslash or a control character). So the chunk is the
 * remembered one with that string, and nothing else, changed. Where the remembered string sits is
 * proved once, when it is learnt: the chunk with a marker in its place must parse with the marker
 * as its text. A server whose chunks differ otherwise (a per-chunk id, OpenAI's random
 * `obfuscation` field) never matches; after a few templates that were never used, learning stops for
 * the answer, so such a stream costs at most those few extra parses.
 */
export class TextChunkTemplate {
  private before = '';
  private after = '';
  /** Templates learnt that no chunk has matched yet in a row; at the limit, no more are learnt. */
  private unused = 0;
  private used = false;

  constructor(
    /** The JSON key whose string value is the text (`content`, `text`). */
    private readonly key: string,
    /** The text of a parsed chunk if the chunk is a plain text chunk (and nothing else), else undefined. */
    private readonly textOf: (chunk: unknown) => string | undefined,
  ) {}

  /** The text of `data` if it is the learnt chunk with another text; undefined when it must be parsed. */
  read(data: string): string | undefined {
    const { before, after } = this;
    if (before === '' || data.length < before.length + after.length) return undefined;
    // Sliced and compared, not startsWith: V8's optimised startsWith compares a character at a time
    // (~500 ns for this prefix against ~50; measured in a loop over eventsource-parser's events).
    const end = data.length - after.length;
    if (data.slice(0, before.length) !== before || data.slice(end) !== after) return undefined;
    const body = data.slice(before.length, end);
    let text = body;
    if (NEEDS_DECODING.test(body)) {
      try {
        text = JSON.parse(`"${body}"`) as string;
      } catch {
        return undefined; // not one JSON string: parsed whole, it fails as a malformed chunk does
      }
    }
    this.used = true;
    return text;
  }

  /** After a chunk was parsed whole: remembers it as the template if it is a plain text chunk. */
  learn(data: string, chunk: unknown): void {
    if (this.unused >= MAX_UNUSED_TEMPLATES) return;
    const text = this.textOf(chunk);
    if (text === undefined) return;
    const needle = `"${this.key}":${JSON.stringify(text)}`;
    const at = data.indexOf(needle);
    if (at < 0 || data.indexOf(needle, at + 1) >= 0) return; // sent encoded otherwise, or twice: no template
    const before = data.slice(0, at + this.key.length + 4);
    const after = data.slice(at + needle.length - 1);
    if (before === this.before && after === this.after) return;
    if (!this.provesPlace(before, after)) return;
    if (this.before !== '') this.unused = this.used ? 0 : this.unused + 1;
    this.before = before;
    this.after = after;
    this.used = false;
  }

  private provesPlace(before: string, after: string): boolean {
    try {
      return this.textOf(JSON.parse(`${before}${MARKER}${after}`)) === MARKER;
    } catch {
      return false;
    }
  }
}

/** A string body that is not its own text: escapes, quotes, control characters (which JSON refuses). */
const NEEDS_DECODING = /["\\\u0000-\u001f]/;
const MARKER = 'switchboard-template-marker';
const MAX_UNUSED_TEMPLATES = 3;
