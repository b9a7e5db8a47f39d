import type { Locator, Page } from 'playwright-core';

/** WCAG AA for normal-size text. */
export const MIN_TEXT_CONTRAST = 4.5;

export interface ContrastReading {
  text: string;
  color: string;
  background: string;
  ratio: number;
}

/**
 * The contrast ratio (WCAG 2) between an element's text colour and the background it is painted on:
 * the element's own background composited over its ancestors' down to the first opaque one (the
 * page's canvas is taken as white, never reached in practice: the shell paints its background).
 * `pseudo` reads a pseudo-element's colour instead (`::placeholder`). Runs in the page (playwright
 * serialises the function), so it reads the browser's computed colours.
 */
function contrastInPage(node: any, pseudo: string | null): ContrastReading {
  // Runs in the browser; the hub's tsconfig has no DOM types, so its globals are reached loosely.
  const getComputedStyle = (target: any, of?: string): { color: string; backgroundColor: string } => (globalThis as any).getComputedStyle(target, of);
  type Rgba = [number, number, number, number];
  const parse = (value: string): Rgba => {
    const rgb = /^rgba?\(([^)]+)\)$/.exec(value);
    if (rgb) {
      const parts = rgb[1]
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return [parts[0], parts[1], parts[2], parts[3] ?? 1];
    }
    // color-mix() and friends compute to color(srgb r g b / a) with channels in 0..1.
    const srgb = /^color\(srgb ([^)]+)\)$/.exec(value);
    if (srgb) {
      const parts = srgb[1]
        .split(/[\s/]+/)
        .filter(Boolean)
        .map(Number);
      return [parts[0] * 255, parts[1] * 255, parts[2] * 255, parts[3] ?? 1];
    }
    throw new Error(`unreadable colour ${value}`);
  };
  const over = (top: Rgba, bottom: Rgba): Rgba => {
    const alpha = top[3] + bottom[3] * (1 - top[3]);
    if (alpha === 0) return [0, 0, 0, 0];
    const mix = (index: number) => (top[index] * top[3] + bottom[index] * bottom[3] * (1 - top[3])) / alpha;
    return [mix(0), mix(1), mix(2), alpha];
  };
  const layers: Rgba[] = [];
  for (let current: any = node; current; current = current.parentElement) {
    const layer = parse(getComputedStyle(current).backgroundColor);
    if (layer[3] > 0) layers.push(layer);
    if (layer[3] >= 1) break;
  }
  let background: Rgba = [255, 255, 255, 1];
  for (const layer of layers.reverse()) background = over(layer, background);
  // Text is drawn with the element's opacity too (a disabled-looking but enabled control, a faded note).
  let opacity = 1;
  for (let current: any = node; current; current = current.parentElement) opacity *= Number((globalThis as any).getComputedStyle(current).opacity);
  const ink = parse(getComputedStyle(node, pseudo ?? undefined).color);
  const color = over([ink[0], ink[1], ink[2], ink[3] * opacity], background);
  const luminance = (value: Rgba) => {
    const channel = (c: number) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(value[0]) + 0.7152 * channel(value[1]) + 0.0722 * channel(value[2]);
  };
  const [light, dark] = [luminance(color), luminance(background)].sort((a, b) => b - a);
  const css = (value: Rgba) => `rgb(${value.slice(0, 3).map(Math.round).join(', ')})`;
  const text = pseudo ? String(node.placeholder ?? '') : String(node.value && node.tagName !== 'BUTTON' ? node.value : (node.textContent ?? ''));
  return { text: text.trim().slice(0, 60), color: css(color), background: css(background), ratio: Math.round(((light + 0.05) / (dark + 0.05)) * 100) / 100 };
}

export function readContrast(element: Locator, pseudo: string | null = null): Promise<ContrastReading> {
  return element.evaluate(contrastInPage, pseudo);
}

/**
 * Every visible, enabled button on the page at rest and hovered; returns those below the minimum.
 * Buttons showing only an icon carry their name in aria-label and are judged the same way.
 */
export async function lowContrastButtons(buttons: Locator): Promise<(ContrastReading & { state: string })[]> {
  const failures: (ContrastReading & { state: string })[] = [];
  for (const button of await buttons.all()) {
    if (!(await button.isVisible()) || (await button.isDisabled())) continue;
    const rest = await readContrast(button);
    if (rest.ratio < MIN_TEXT_CONTRAST) failures.push({ ...rest, state: 'rest' });
    await button.hover();
    const hovered = await readContrast(button);
    if (hovered.ratio < MIN_TEXT_CONTRAST) failures.push({ ...hovered, state: 'hover' });
  }
  return failures;
}

/** Controls a pointer or the keyboard can reach: judged at rest, hovered and focused. */
const INTERACTIVE = 'a[href], button, [role="tab"], select, input, textarea, summary, [tabindex="0"]';

/**
 * Every text the page shows under `root` (issue 33: not only `.btn`): each visible element holding
 * text of its own — links, nav entries, tabs, badges, status chips, table cells, notes — and every
 * input's value and placeholder, at rest; the controls also hovered and focused. Disabled controls
 * are left out (WCAG exempts them). Returns those below 4.5:1, saying where and in which state.
 */
export async function lowContrastText(page: Page, root = 'body', { states = true } = {}): Promise<(ContrastReading & { state: string; element: string })[]> {
  // A page that re-renders while it is read (a live list refreshed, a status that changed) drops the
  // marks: the pass is read again from the start, a few times, then it is an error of its own.
  for (let pass = 1; ; pass += 1) {
    const failures = await contrastPass(page, root, states);
    if (failures !== 'rerendered') return failures;
    if (pass === 4) throw new Error(`the page kept re-rendering while its contrast was read (${pass} passes)`);
  }
}

/** The page's name for contrastInPage, installed by each pass (a navigation clears it). */
const IN_PAGE = '__switchboardContrast';

/**
 * One reading of every marked text: the elements are marked and read at rest in one evaluation (no
 * re-render can come between), then each control is hovered (a real pointer: `:hover` needs one) and
 * read, and focused, read and blurred in one evaluation: three round trips per control instead of
 * eight, which took layout.e2e's text check from ~21 s to ~10 s per theme.
 */
async function contrastPass(page: Page, root: string, states: boolean): Promise<(ContrastReading & { state: string; element: string })[] | 'rerendered'> {
  // A string is evaluated by the browser's devtools protocol, outside the page's content security policy.
  await page.evaluate(`globalThis.${IN_PAGE} = ${contrastInPage.toString()}`);
  const marked = await page.locator(root).evaluate(
    (scope: any, { interactive, inPage }: { interactive: string; inPage: string }) => {
      const window = globalThis as any;
      const visible = (element: any) => {
        const style = window.getComputedStyle(element);
        return element.getClientRects().length > 0 && style.visibility !== 'hidden' && !element.closest('[aria-hidden="true"], .sr-only');
      };
      const disabled = (element: any) => element.matches(':disabled') || element.closest('[aria-disabled="true"], fieldset:disabled') !== null;
      const ownText = (element: any) => Array.from(element.childNodes as any[]).some((child: any) => child.nodeType === 3 && child.textContent.trim() !== '');
      for (const old of Array.from(window.document.querySelectorAll('[data-contrast-id]')) as any[]) old.removeAttribute('data-contrast-id');
      const found: { id: string; pseudo: string | null; interactive: boolean; element: string; rest: ContrastReading }[] = [];
      let next = 0;
      for (const element of Array.from(scope.querySelectorAll('*')) as any[]) {
        if (['SCRIPT', 'STYLE', 'svg', 'OPTION'].includes(element.tagName) || !visible(element) || disabled(element)) continue;
        const field =
          ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName) && !['checkbox', 'radio', 'range', 'color', 'file', 'hidden'].includes(element.type);
        const named =
          element.tagName.toLowerCase() +
          (element.className && typeof element.className === 'string' ? `.${element.className.trim().split(/\s+/).join('.')}` : '');
        if (!ownText(element) && !field && !element.matches(interactive)) continue;
        const id = `c${next++}`;
        element.setAttribute('data-contrast-id', id);
        const isInteractive = element.matches(interactive);
        if (ownText(element) || (field && element.value) || (isInteractive && !field && element.textContent.trim() !== ''))
          found.push({ id, pseudo: null, interactive: isInteractive, element: named, rest: window[inPage](element, null) });
        if (field && element.placeholder && !element.value)
          found.push({ id, pseudo: '::placeholder', interactive: false, element: named, rest: window[inPage](element, '::placeholder') });
      }
      return found;
    },
    { interactive: INTERACTIVE, inPage: IN_PAGE },
  );
  const failures: (ContrastReading & { state: string; element: string })[] = [];
  const judge = (reading: ContrastReading, state: string, element: string) => {
    if (reading.ratio < MIN_TEXT_CONTRAST) failures.push({ ...reading, state, element });
  };
  // The element read now, or null when a re-render replaced it; `focus` focuses it first and blurs it after.
  const readNow = (id: string, focus: boolean): Promise<ContrastReading | null> =>
    page.evaluate(
      ({ id, focus, inPage }) => {
        const window = globalThis as any;
        const element = window.document.querySelector(`[data-contrast-id="${id}"]`);
        if (!element) return null;
        if (!focus) return window[inPage](element, null) as ContrastReading;
        element.focus();
        const reading = window[inPage](element, null) as ContrastReading;
        element.blur();
        return reading;
      },
      { id, focus, inPage: IN_PAGE },
    );
  for (const entry of marked) {
    judge(entry.rest, entry.pseudo ? 'placeholder' : 'rest', entry.element);
    if (!states || !entry.interactive) continue;
    await page
      .locator(`[data-contrast-id="${entry.id}"]`)
      .hover({ force: true })
      .catch(() => undefined);
    const hovered = await readNow(entry.id, false);
    if (hovered === null) return 'rerendered';
    judge(hovered, 'hover', entry.element);
    const focused = await readNow(entry.id, true);
    if (focused === null) return 'rerendered';
    judge(focused, 'focus', entry.element);
  }
  await page.mouse.move(0, 0);
  return failures;
}
