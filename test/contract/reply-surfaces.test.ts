import { CHANNELS } from '../../adapters';
import { mattermostSurfaces } from './surfaces/mattermost';
import { replySurfaceContract, type SurfaceHarness } from './surfaces/reply-surface-contract';
import { slackSurfaces } from './surfaces/slack';
import { telegramSurfaces } from './surfaces/telegram';
import { webchatSurfaces } from './surfaces/webchat';

/**
 * The channel contract's fast layer: every chat channel's reply surface runs the same scripted turns
 * through the shared presenter, with no hub and no network (./surfaces). The web channel relays the
 * session's frames as they are and has no reply surface. A chat channel added to the registry adds
 * its harness here.
 */
const HARNESSES: Record<string, SurfaceHarness[]> = {
  slack: [slackSurfaces],
  telegram: [telegramSurfaces(false), telegramSurfaces(true)],
  webchat: [webchatSurfaces],
  mattermost: [mattermostSurfaces],
};
const WITHOUT_SURFACE = ['web'];

it('every chat channel of the registry has its reply surface under contract', () => {
  expect(
    CHANNELS.map((channel) => channel.name)
      .filter((name) => !WITHOUT_SURFACE.includes(name))
      .sort(),
  ).toEqual(Object.keys(HARNESSES).sort());
});

for (const harness of Object.values(HARNESSES).flat()) replySurfaceContract(harness);
