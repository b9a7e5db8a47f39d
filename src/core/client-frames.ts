/** The client frames live in the wire protocol (src/protocol/client-frames.ts); these names stay importable from here. */
export { clientFrameSchemas, turnMode, userMessageText, USER_MESSAGE_MAX_CHARS, type ClientFrame, type ClientFrameType } from '../protocol/client-frames';
