import { parseConfirmPayload } from '../../../adapters/webchat/normalize';
import type { BotMessage } from '../../../adapters/webchat/render';
import { widgetSurface } from '../../../adapters/webchat/widget-surface';
import type { SurfaceHarness } from './reply-surface-contract';

/** The widget's reply surface, its outputs recorded as the visitor's tabs get them (paragraph streaming, buttons). */
export const webchatSurfaces: SurfaceHarness = {
  name: 'webchat',
  conversation() {
    const messages: BotMessage[] = [];
    let typed = false;
    const surface = widgetSurface({
      stream: 'paragraphs',
      confirmations: 'buttons',
      deliver: (output) => (output.kind === 'say' ? messages.push(output.message) : (typed ||= output.on)),
      refuse: async () => undefined,
    });
    return {
      surface,
      shown: () => messages.map((message) => message.text),
      offered: () => {
        const asked = [...messages].reverse().find((message) => 'quick_replies' in message);
        return asked && 'quick_replies' in asked ? asked.quick_replies.map((reply) => parseConfirmPayload(reply.payload)?.action ?? '?') : null;
      },
      showedWork: () => typed,
    };
  },
};
