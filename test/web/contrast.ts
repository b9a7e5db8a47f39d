import type { Locator } from 'playwright-core';

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
 * Runs in the page (playwright serialises the function), so it reads the browser's computed colours.
 */
export function readContrast(element: Locator): Promise<ContrastReading> {
  // Runs in the browser; the hub's tsconfig has no DOM types, so its globals are reached loosely.
  return element.evaluate((node: any) => {
    const getComputedStyle = (target: any): { color: string; backgroundColor: string } => (globalThis as any).getComputedStyle(target);
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
    const color = over(parse(getComputedStyle(node).color), background);
    const luminance = (value: Rgba) => {
      const channel = (c: number) => {
        const s = c / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(value[0]) + 0.7152 * channel(value[1]) + 0.0722 * channel(value[2]);
    };
    const [light, dark] = [luminance(color), luminance(background)].sort((a, b) => b - a);
    const css = (value: Rgba) => `rgb(${value.slice(0, 3).map(Math.round).join(', ')})`;
    return {
      text: (node.textContent ?? '').trim(),
      color: css(color),
      background: css(background),
      ratio: Math.round(((light + 0.05) / (dark + 0.05)) * 100) / 100,
    };
  });
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
