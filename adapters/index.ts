/**
 * The channel registry: every channel this hub has, in the order GET /admin/channels lists them.
 * The composition root (src/compose/) and the core learn channel names from here only — the config sections, the adapters to
 * build and supervise, which `binding_channels` values exist and how session keys route.
 * Adding a channel: one folder (adapters/<name>/, exporting a descriptor) and one line here
 * (adapters/README.md).
 */
import type { ChannelDescriptor } from '../src/core/channel';
// Each channel's descriptor, not its package: an adapter and its client library are loaded when the
// channel is switched on (`create`), so a hub without Slack never loads @slack/bolt.
import { mattermostChannel } from './mattermost/channel';
import { slackChannel } from './slack/channel';
import { telegramChannel } from './telegram/channel';
import { webChannel } from './web/channel';
import { webchatChannel } from './webchat/channel';

export const CHANNELS: readonly ChannelDescriptor[] = [slackChannel, telegramChannel, webChannel, webchatChannel, mattermostChannel];
