/**
 * What of one turn's answer the user has seen, so that an interrupted stream never shows text
 * twice or loses some:
 * - `live`: tokens are shown as they come.
 * - `rerun`: the turn started over (a hub restarted it): tokens repeating what was already shown
 *   are swallowed, and showing resumes where the user left off.
 * - `held`: frames may have been lost (the hub went away while streaming): tokens are kept back
 *   and the gap is filled from the turn's full text at its end.
 * `finish(fullText)` always completes the answer: what is missing, or the whole answer again when
 * what was shown is not its beginning (the rerun said something else).
 */
export class TurnTranscript {
  private shown = '';
  private mode: 'live' | 'rerun' | 'held' = 'live';
  private rerun = '';

  /** Whether tokens are being kept back until the end of the turn. */
  get holding(): boolean {
    return this.mode === 'held';
  }

  /** The text of a `token` frame → what to show now ('' while catching up). */
  accept(text: string): string {
    switch (this.mode) {
      case 'live':
        this.shown += text;
        return text;
      case 'held':
        return '';
      case 'rerun': {
        this.rerun += text;
        if (this.shown.startsWith(this.rerun)) return '';
        if (this.rerun.startsWith(this.shown)) {
          const rest = this.rerun.slice(this.shown.length);
          this.shown = this.rerun;
          this.mode = 'live';
          return rest;
        }
        this.mode = 'held'; // the rerun says something else: settle it at the end
        return '';
      }
    }
  }

  /** The turn started over from its beginning (`agent_state thinking` again). */
  restart(): void {
    this.rerun = '';
    this.mode = this.shown === '' ? 'live' : 'rerun';
  }

  /** Frames may have been lost: keep tokens back until the full text is known. */
  hold(): void {
    this.mode = 'held';
  }

  /**
   * The turn's full text (`done.text`, or the reply stored in the history) → what to show so the
   * user has seen all of it. `restated`: what was shown is not the beginning of the answer, so the
   * whole answer follows.
   */
  finish(fullText: string): { text: string; restated: boolean } {
    const shown = this.shown;
    this.shown = fullText;
    this.mode = 'live';
    if (fullText.startsWith(shown)) return { text: fullText.slice(shown.length), restated: false };
    return { text: fullText, restated: true };
  }
}
