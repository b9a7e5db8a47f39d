/**
 * The channel registry: every channel this hub has, in the order GET /admin/channels lists them.
 * The composition root (src/compose/) and the core learn channel names from here only — the config sections, the adapters to
 * build and supervise, which `binding_channels` values exist and how session keys route.
 * Adding a channel: one folder (adapters/<name>/, exporting a descriptor) and one line here
 * (adapters/README.md).
 */
import type { ChannelDescriptor } from '../src/core/channel';
import { mattermostChannel } from './mattermost';
import { slackChannel } from './slack';
import { telegramChannel } from './telegram';
import { webChannel } from './web';
import { webchatChannel } from './webchat';

export const CHANNELS: readonly ChannelDescriptor[] = [slackChannel, telegramChannel, webChannel, webchatChannel, mattermostChannel];
