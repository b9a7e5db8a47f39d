import { takeParagraphs, textPieces } from './paragraphs';
import type { EditCapability, InterimResult, LiveReply, ReplySurface } from './reply-surface';

/**
 * The edit way (a surface with `edit`): the first view of the streamed answer is a new message,
 * later views edit it, and at the end it becomes the answer's first piece (edited only when it
 * differs); the other pieces follow as new messages. With `cadence.placeholder` a message is posted
 * when the turn starts. Without a free send slot no view is sent, and the answer is sent whole.
 */
export class EditReply implements LiveReply {
  private id: string | null = null;
  private shown: string | null = null;

  constructor(
    private readonly surface: ReplySurface,
    private readonly edit: EditCapability,
  ) {}

  async begin(): Promise<void> {
    const placeholder = this.surface.cadence.placeholder;
    if (placeholder !== undefined && this.id === null) this.id = await this.edit.open(placeholder, { interim: false });
  }

  async update(text: string): Promise<InterimResult> {
    if (this.id === null) {
      this.id = await this.edit.open(text, { interim: true });
      if (this.id === null) return 'skipped';
      this.shown = text;
      return 'shown';
    }
    if (!(await this.edit.change(this.id, text, { interim: true }))) return 'skipped';
    this.shown = text;
    return 'shown';
  }

  async finish(pieces: string[]): Promise<void> {
    const [first, ...rest] = pieces;
    if (this.id === null) await this.surface.post(first!, { first: true });
    else if (first !== this.shown) await this.edit.change(this.id, first!, { interim: false });
    this.shown = first!;
    for (const piece of rest) await this.surface.post(piece, { first: false });
  }
}

/**
 * The post way (a surface with neither native streaming nor edits: messages cannot change once
 * sent): with `cadence.paragraphs`, each paragraph is posted once complete; what is left (or, without
 * paragraphs, the whole answer) at the end or before a question. Once anything streamed, the reply
 * ends with the rest of what streamed (`streamed`: the presenter's text so far), since what was
 * posted cannot be taken back.
 */
export class PostReply implements LiveReply {
  /** The streamed text already posted (a prefix of what streamed). */
  private posted = '';
  private anyPosted = false;

  constructor(
    private readonly surface: ReplySurface,
    private readonly streamed: () => string,
  ) {}

  async update(text: string): Promise<InterimResult> {
    if (!this.surface.cadence.paragraphs || !text.startsWith(this.posted)) return 'shown';
    const { paragraphs, rest } = takeParagraphs(text.slice(this.posted.length));
    this.posted = text.slice(0, text.length - rest.length);
    for (const paragraph of paragraphs) await this.post(paragraph);
    return 'shown';
  }

  async beforeQuestion(streamed: string): Promise<void> {
    await this.postRest(streamed);
  }

  async finish(pieces: string[]): Promise<void> {
    const streamed = this.streamed();
    await this.postRest(streamed.trim() !== '' ? streamed : pieces.join('\n\n'));
  }

  /** What `text` holds past the posted part (all of it when it does not continue what was posted). */
  private async postRest(text: string): Promise<void> {
    const rest = text.startsWith(this.posted) ? text.slice(this.posted.length) : text;
    this.posted = text;
    for (const piece of textPieces(rest, this.surface.cadence.paragraphs === true)) await this.post(piece);
  }

  private async post(text: string): Promise<void> {
    await this.surface.post(text, { first: !this.anyPosted });
    this.anyPosted = true;
  }
}
