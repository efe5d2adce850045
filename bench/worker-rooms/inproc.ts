// The in-process rooms measure's objects and routes (bench/rooms-inproc.ts): the clients are WebSockets
// that Durable Objects (`BenchHolder`) open inside workerd, to the one object (`BenchSingle`) or to the
// room through `routeRoomRequest`, as a real client comes. No kernel socket is made, so no file is
// held open per connection and one workerd process holds tens of thousands. Every receipt is stamped
// with workerd's clock, the same clock the Worker reads right before it publishes.
//
//   /inproc/publish/<single|plain|room>/<room>[?n=<plain objects>]  (POST, the data as body)  `{ start, seq }`: `start` is the
//                                         clock read right before the blast or the publish
//   /inproc/<open|status|wait|report|close>/<holder>  (POST, JSON)   the holder's RPC method of that name
import { DurableObject } from "cloudflare:workers";
import { publishToRoom, routeRoomRequest } from "dokit/rooms";
import type { HolderStatus, OpenOptions, Receipts } from "./inproc-types";
import type { BenchSingle } from "./scale";

export interface InprocEnv {
  ROOMS_B10: DurableObjectNamespace;
  ROOM_SEQUENCER: DurableObjectNamespace;
  SINGLE: DurableObjectNamespace<BenchSingle>;
  INPROC_HOLDER: DurableObjectNamespace<BenchHolder>;
}

const MESSAGE = '{"type":"dokit_room","seq":';
const WELCOME = '{"type":"dokit_room_welcome"';
const COUNT = '{"type":"dokit_room_count","count":';

/**
 * The clock: `Date.now()`. Local workerd moves it as its event loop runs (each WebSocket message is
 * an event), in whole ms; `performance.now()` reads the same clock. It agreed with the system clock
 * read at each call (the `precise_timers` flag, `--inproc-clock=precise`) within the noise.
 */
const now = () => Date.now();

/** This isolate: every object of the worker runs in one locally (random values wait for a request). */
let isolate: string | undefined;
const isolateId = () => (isolate ??= crypto.randomUUID().slice(0, 8));

/**
 * Holds WebSocket clients opened in-process and stamps each message frame's receipt. Its open
 * connections do not keep it in memory: workerd evicts it after about 70 s without a request, and
 * the connections close with it (the driver calls it while others open).
 */
export class BenchHolder extends DurableObject<InprocEnv> {
  /** This instance, `<isolate>/<object>@<constructed at>`: a new one (after a reset or an eviction) holds no connections. */
  readonly #instance = `${isolateId()}/${crypto.randomUUID().slice(0, 8)}@${now()}`;
  /** By connection number; a connection that failed to open leaves a hole. */
  #sockets: (WebSocket | undefined)[] = [];
  /** Connections opened. */
  #open = 0;
  /** Per connection: the last seq received (0: none yet). */
  #last = new Int32Array(0);
  /** Per connection: the latest room-wide count it was told. */
  #count = new Int32Array(0);
  #welcomed = 0;
  #lost = 0;
  #duplicates = 0;
  /** Count frames received, on every connection. */
  #countFrames = 0;
  /** Per seq: receipt times, one per connection that received it. */
  #times = new Map<number, number[]>();
  /** Per seq: resolves once every connection has it. */
  #waiting = new Map<number, () => void>();
  /** Per connection being opened: resolves once its welcome arrives. */
  #welcome = new Map<number, () => void>();

  /**
   * Opens `count` connections, `parallel` at a time; a room's connection counts as open once its
   * welcome frame arrived.
   * @returns how many opened, how many failed (with the first failure's text), and ms taken
   */
  async open(options: OpenOptions): Promise<{ opened: number; failed: number; error?: string; ms: number; instance: string }> {
    const start = now();
    const base = this.#sockets.length;
    this.#last = grow(this.#last, base + options.count);
    this.#count = grow(this.#count, base + options.count);
    let next = 0;
    let failed = 0;
    let error: string | undefined;
    const one = async (i: number): Promise<void> => {
      const index = base + i;
      const id = `c${options.first + i}`;
      try {
        const response =
          options.shards > 0
            ? await this.#toRoom(options, id)
            : await this.#toSingle(options.shards < 0 ? `${options.room}#${(options.first + i) % -options.shards}` : options.room, id);
        const socket = response.webSocket;
        if (!socket) throw new Error(`no WebSocket: ${response.status} ${await response.text()}`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const welcomed = options.shards > 0
          ? new Promise<void>((resolve, reject) => {
              this.#welcome.set(index, resolve);
              timer = setTimeout(() => reject(new Error("no welcome within 60 s")), 60_000);
            })
          : undefined;
        socket.addEventListener("message", (event) => this.#frame(index, event.data));
        socket.addEventListener("close", () => this.#lost++);
        socket.accept();
        this.#sockets[index] = socket;
        if (welcomed) await welcomed.finally(() => timer !== undefined && clearTimeout(timer));
        else this.#welcomed++;
        this.#open++;
      } catch (cause) {
        failed++;
        error ??= String(cause);
        this.#welcome.delete(index);
      }
    };
    const worker = async (): Promise<void> => {
      while (next < options.count) await one(next++);
    };
    await Promise.all(Array.from({ length: Math.min(options.parallel, options.count) }, worker));
    return { opened: options.count - failed, failed, ...(error && { error }), ms: now() - start, instance: this.#instance };
  }

  #toSingle(room: string, id: string): Promise<Response> {
    const request = new Request(`http://bench/single/${room}?_pk=${id}`, { headers: { Upgrade: "websocket" } });
    return this.env.SINGLE.get(this.env.SINGLE.idFromName(room)).fetch(request);
  }

  #toRoom(options: OpenOptions, id: string): Promise<Response> {
    const request = new Request(`http://bench/room/b10/${options.room}?shards=${options.shards}&_pk=${id}`, { headers: { Upgrade: "websocket" } });
    return routeRoomRequest(request, this.env, { shards: "ROOMS_B10", room: options.room, shardCount: options.shards });
  }

  /** Reads only the frame's head: a message's seq, a welcome, a count. */
  #frame(index: number, data: unknown): void {
    if (typeof data !== "string") return;
    if (data.startsWith(MESSAGE)) {
      const at = now();
      const seq = Number.parseInt(data.slice(MESSAGE.length, MESSAGE.length + 16), 10);
      if (seq <= (this.#last[index] ?? 0)) {
        this.#duplicates++;
        return;
      }
      this.#last[index] = seq;
      let times = this.#times.get(seq);
      if (!times) this.#times.set(seq, (times = []));
      times.push(at);
      if (times.length === this.#open) this.#waiting.get(seq)?.();
    } else if (data.startsWith(WELCOME)) {
      this.#count[index] = (JSON.parse(data) as { count: number }).count;
      this.#welcomed++;
      this.#welcome.get(index)?.();
      this.#welcome.delete(index);
    } else if (data.startsWith(COUNT)) {
      this.#count[index] = Number.parseInt(data.slice(COUNT.length), 10);
      this.#countFrames++;
    }
  }

  /** @returns the holder's connections, welcomes, counts and losses (`size`: the room-wide count to look for) */
  status(size: number): HolderStatus {
    let counted = 0;
    for (let i = 0; i < this.#sockets.length; i++) if (this.#sockets[i] && this.#count[i] === size) counted++;
    return { instance: this.#instance, sockets: this.#open, welcomed: this.#welcomed, counted, lost: this.#lost, duplicates: this.#duplicates, countFrames: this.#countFrames };
  }

  /** @returns once every connection received `seq`, or after `ms`: how many did */
  async wait(seq: number, ms: number): Promise<number> {
    const received = () => this.#times.get(seq)?.length ?? 0;
    if (received() < this.#open) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiting.set(seq, resolve);
        timer = setTimeout(resolve, ms);
      });
      if (timer !== undefined) clearTimeout(timer);
      this.#waiting.delete(seq);
    }
    return received();
  }

  /** @returns each of `seqs` as received, its times dropped from the holder */
  report(seqs: number[]): Receipts[] {
    return seqs.map((seq) => {
      const times = this.#times.get(seq) ?? [];
      this.#times.delete(seq);
      return { seq, sockets: this.#open, received: times.length, times };
    });
  }

  /** Closes every connection. @returns how many */
  close(): number {
    const count = this.#open;
    for (const socket of this.#sockets) {
      try {
        socket?.close(1000, "bench done");
      } catch {
        // closed already
      }
    }
    this.#sockets = [];
    this.#open = 0;
    this.#last = new Int32Array(0);
    this.#count = new Int32Array(0);
    this.#times.clear();
    this.#welcomed = this.#lost = this.#duplicates = 0;
    return count;
  }
}

/** @returns `array` with room for `length` entries, its values kept */
function grow(array: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  if (array.length >= length) return array;
  const bigger = new Int32Array(length);
  bigger.set(array);
  return bigger;
}

/** The Worker's `/inproc/…` routes. */
export async function inprocRoute(request: Request, env: InprocEnv): Promise<Response> {
  const [, , action = "", kind = "", room = ""] = new URL(request.url).pathname.split("/");
  if (action === "publish") {
    const data = await request.text();
    if (kind === "single") {
      const stub = env.SINGLE.get(env.SINGLE.idFromName(room));
      const start = now();
      return Response.json({ start, seq: await stub.blast(data) });
    }
    // N plain objects like the one object, each holding its part, blasted together: the room's
    // sends without the room (no sequencer, no delivery call, no stored record).
    if (kind === "plain") {
      const count = Number(new URL(request.url).searchParams.get("n"));
      const stubs = Array.from({ length: count }, (_, i) => env.SINGLE.get(env.SINGLE.idFromName(`${room}#${i}`)));
      const start = now();
      const seqs = await Promise.all(stubs.map((stub) => stub.blast(data)));
      return Response.json({ start, seq: seqs[0] });
    }
    if (kind === "room") {
      const value: unknown = JSON.parse(data);
      const start = now();
      return Response.json({ start, seq: await publishToRoom(env, room, value) });
    }
    return new Response("no route", { status: 404 });
  }
  // kind: the holder's name
  const holder = env.INPROC_HOLDER.get(env.INPROC_HOLDER.idFromName(kind));
  const body = request.method === "POST" ? ((await request.json()) as Record<string, unknown>) : {};
  if (action === "open") return Response.json(await holder.open(body as unknown as OpenOptions));
  if (action === "status") return Response.json(await holder.status(Number(body.size)));
  if (action === "wait") return Response.json(await holder.wait(Number(body.seq), Number(body.ms)));
  if (action === "report") return Response.json(await holder.report(body.seqs as number[]));
  if (action === "close") return Response.json(await holder.close());
  return new Response("no route", { status: 404 });
}
