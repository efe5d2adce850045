import type { WebSockets } from "../websockets/websockets";
import { countFrame } from "./room-frames";

/** Where the count last sent to every connection is kept (a woken shard does not send it again). */
const SENT = "__dokit_room_count";

/**
 * Tells a shard's clients the room-wide count when it changes: `{"type":"dokit_room_count","count"}`
 * to every connection, at most once per `countMs` (the first change after a quiet `countMs` goes at
 * once, later ones wait for the end of that `countMs` and go as one frame with the latest count).
 * The count last sent is stored (one write per frame), so a shard woken from hibernation by a
 * delivery does not send its clients the count they have.
 */
export class CountNotice {
  readonly #webSockets: WebSockets;
  readonly #countMs: number;
  readonly #current: () => number;
  readonly #storage: DurableObjectStorage;
  /** The count last sent to every connection (`-1`: some connection was told another, in its welcome; `undefined`: not read yet). */
  #sent: number | undefined;
  #sentAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(webSockets: WebSockets, countMs: number, current: () => number, storage: DurableObjectStorage) {
    this.#webSockets = webSockets;
    this.#countMs = countMs;
    this.#current = current;
    this.#storage = storage;
  }

  /** A connection was welcomed with `count`: a later change is sent even when it comes back to the last count sent. */
  welcomed(count: number): void {
    if (count === this.#sent) return;
    this.#sent = -1;
    void this.#storage.put(SENT, -1);
  }

  /** A room-wide count was heard from the sequencer (changed or not): `count`, as the shard tells it now. */
  heard(count: number): void {
    if (count === this.#sent || this.#timer) return;
    this.#timer = setTimeout(() => void this.#send(), Math.max(0, this.#sentAt + this.#countMs - Date.now()));
  }

  async #send(): Promise<void> {
    try {
      this.#sent ??= (await this.#storage.get<number>(SENT)) ?? -1;
    } catch (error) {
      console.warn("dokit: a room shard could not read the count it last sent; it sends the count", error);
      this.#sent = -1;
    } finally {
      this.#timer = undefined;
    }
    const count = this.#current();
    if (count === this.#sent) return;
    this.#sent = count;
    this.#sentAt = Date.now();
    void this.#storage.put(SENT, count);
    this.#webSockets.broadcast(countFrame(count));
  }
}
