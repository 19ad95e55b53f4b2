// Server-sent events, as the OpenAI streaming protocol uses them: `data: <json>` lines, an event
// ending at a blank line, `data: [DONE]` at the end. Follows the WHATWG event-stream rules that
// matter here: lines end in \n, \r\n or \r; a line starting with ':' is a comment; "data:" drops one
// space after the colon; several data lines in one event join with \n; other fields (event:, id:,
// retry:) are ignored. Bytes are decoded incrementally, so a UTF-8 character or a line split across
// network chunks is put back together.

export interface SseEvent {
  data: string;
  /** The `event:` field, when the server sent one (OpenAI-compatible servers rarely do). */
  event: string | null;
}

export class SseParser {
  readonly #decoder = new TextDecoder('utf-8');
  #buffer = '';
  #data: string[] = [];
  #event: string | null = null;
  /** A \r ended the previous chunk: a \n at the start of the next one belongs to it. */
  #pendingCr = false;

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array): SseEvent[] {
    return this.#feed(this.#decoder.decode(chunk, { stream: true }));
  }

  /** The end of the stream: returns the last event if the server did not end it with a blank line. */
  end(): SseEvent[] {
    const out = this.#feed(this.#decoder.decode());
    if (this.#buffer !== '') {
      this.#line(this.#buffer, out);
      this.#buffer = '';
    }
    this.#dispatch(out);
    return out;
  }

  #feed(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.#pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.#pendingCr = false;
    this.#buffer += text;
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const c = this.#buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.#line(this.#buffer.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < this.#buffer.length) {
          if (this.#buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.#pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return out;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === '') {
      this.#dispatch(out);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
  }

  #dispatch(out: SseEvent[]): void {
    if (this.#data.length > 0) out.push({ data: this.#data.join('\n'), event: this.#event });
    this.#data = [];
    this.#event = null;
  }
}
