import fc from 'fast-check';

/**
 * Hostile HTML: markup built to make a parser or a regex slow (unclosed tags, deep nesting, tags
 * inside tags, unterminated comments and quotes, script openers), repeated to a size. Used by the
 * http_fetch cost test and the knowledge-upload cost test; the reliability suite draws many of them.
 */
export const HOSTILE_HTML_UNITS = [
  '<a',
  '<div>',
  '<span>',
  '<table><tr><td>',
  '<script>',
  '<!--',
  '<a b="',
  '<p>',
  '<ul><li>',
  '<b><i>',
  '</',
  '<<',
  '<x y=>',
  '<a href="javascript:x">',
] as const;

/** One unit (or a mix of two) repeated to about `bytes`. */
export function hostileHtml(bytes: number) {
  return fc
    .record({ units: fc.array(fc.constantFrom(...HOSTILE_HTML_UNITS), { minLength: 1, maxLength: 2 }), text: fc.constantFrom('', 'x', ' word ') })
    .map(({ units, text }) => {
      const unit = units.join(text);
      return unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));
    });
}
