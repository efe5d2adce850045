import { trySend } from "../lifecycle/wire";
import type { WebSockets } from "../websockets/websockets";
import { countFrame } from "./room-frames";

/**
 * Tells a shard's clients the room-wide count when it changes: `{"type":"dokit_room_count","count"}`
 * to every connection, at most once per `countMs` (the first change after a quiet `countMs` goes at
 * once, later ones wait for the end of that `countMs` and go as one frame with the latest count).
 */
export class CountNotice {
  readonly #webSockets: WebSockets;
  readonly #countMs: number;
  readonly #current: () => number;
  /** The count last sent to every connection (`-1`: some connection was told another, in its welcome). */
  #sent = -1;
  #sentAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(webSockets: WebSockets, countMs: number, current: () => number) {
    this.#webSockets = webSockets;
    this.#countMs = countMs;
    this.#current = current;
  }

  /** A connection was welcomed with `count`: a later change is sent even when it comes back to the last count sent. */
  welcomed(count: number): void {
    if (count !== this.#sent) this.#sent = -1;
  }

  /** The room-wide count was heard from the sequencer (changed or not). */
  heard(count: number): void {
    if (count === this.#sent || this.#timer) return;
    this.#timer = setTimeout(() => this.#send(), Math.max(0, this.#sentAt + this.#countMs - Date.now()));
  }

  #send(): void {
    this.#timer = undefined;
    const count = this.#current();
    if (count === this.#sent) return;
    this.#sent = count;
    this.#sentAt = Date.now();
    const frame = countFrame(count);
    for (const connection of this.#webSockets.getConnections()) trySend(connection, frame);
  }
}
