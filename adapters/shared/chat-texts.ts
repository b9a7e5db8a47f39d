/** What every chat channel tells a person in the same situations, in the same words. */

/** Any turn error other than a cancel: the details go to the logs, never to the chat. */
export const APOLOGY_TEXT = 'Sorry, something went wrong while answering. Please try again.';
export const CANCELLED_TEXT = 'Cancelled.';
/** The conversation's previous turn still runs and its policy is `reject`: the new message is not taken. */
export const STILL_ANSWERING_TEXT = 'Still answering your previous message — please wait for it to finish.';
/** A click on a confirmation that is no longer pending (answered, timed out, turn over). */
export const STALE_CONFIRMATION_TEXT = 'This request is no longer pending.';
