import type { Capability, Claims } from "../lifecycle/capability";
import { type AlarmWork, claimAlarm } from "../lifecycle/alarms";
import { DokitError } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";
import { closeWith } from "../frames/close";
import { CLOSE_HEARTBEAT_TIMEOUT } from "../protocol/heartbeat";
import type { HeartbeatSweeper } from "./options";
import type { WebSocketsErrorCode } from "./errors";

/** Options of `HeartbeatSweep`. */
export interface HeartbeatSweepOptions {
  /** A socket whose last ping is older than this many milliseconds is closed (at least 1 000). */
  timeoutMs: number;
}

/**
 * Closes hibernating sockets whose clients stopped pinging, on the object's shared alarm.
 * Given to `new WebSockets({ heartbeat: { sweep } })`, which arms it when a socket is accepted.
 *
 * The sweep runs on a grid of `timeoutMs` (the next multiple of it after now), so accepting more
 * sockets never postpones it, and while sockets are open it runs again one step later; with no
 * socket left it stops. A socket that never pinged (the official `agents` client sends no pings)
 * is left open: the runtime reports no ping time for it. A stale socket is closed within about
 * twice `timeoutMs` of its last ping, with 3008 (`CLOSE_HEARTBEAT_TIMEOUT`).
 */
export class HeartbeatSweep implements Capability, HeartbeatSweeper {
  readonly capabilityName = "HeartbeatSweep";
  readonly timeoutMs: number;
  #lifecycle: Lifecycle | undefined;
  #work: AlarmWork | undefined;
  /** The grid time this instance last scheduled (a wake schedules again once: the same time is a cheap no-op). */
  #armedAt = 0;
  /** Told of each socket a sweep closes (the WebSockets that installed it). */
  #swept: ((ws: WebSocket) => void) | undefined;

  /** @param options - the ping age after which a socket is closed */
  constructor(options: HeartbeatSweepOptions) {
    const timeoutMs = options?.timeoutMs;
    if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs < 1000) {
      throw new DokitError<WebSocketsErrorCode>("INVALID_ARGUMENT", `HeartbeatSweep: timeoutMs must be a number of milliseconds, at least 1000 (got ${String(timeoutMs)})`);
    }
    this.timeoutMs = timeoutMs;
  }

  attach(claims: Claims): void {
    this.#lifecycle = claims.lifecycle;
    this.#work = claimAlarm(claims, "websockets:heartbeat-sweep", async () => void (await this.sweep()));
  }

  /** Tells `swept` of each socket a sweep closes (WebSockets does, when it installs the sweep). */
  onSwept(swept: (ws: WebSocket) => void): void {
    this.#swept = swept;
  }

  /** A socket was accepted: make sure a sweep is pending (a failure is logged; the connection stays). */
  async accepted(): Promise<void> {
    const at = this.#nextRun();
    if (at === this.#armedAt) return;
    this.#armedAt = at;
    try {
      await this.#work?.schedule(at);
    } catch (error) {
      this.#armedAt = 0;
      console.error("dokit: could not arm the heartbeat sweep", error);
    }
  }

  /**
   * Closes every socket whose last ping is older than `timeoutMs`, then schedules the next run
   * while sockets remain.
   * @returns how many sockets it closed
   */
  async sweep(): Promise<number> {
    const ctx = this.#lifecycle?.ctx;
    if (!ctx) return 0;
    const now = Date.now();
    let closed = 0;
    let open = 0;
    for (const ws of ctx.getWebSockets()) {
      if (ws.readyState !== 1) continue;
      const pinged = ctx.getWebSocketAutoResponseTimestamp(ws);
      if (pinged && now - pinged.getTime() > this.timeoutMs) {
        closeWith(ws, CLOSE_HEARTBEAT_TIMEOUT, `dokit: no ping within ${this.timeoutMs} ms`);
        this.#swept?.(ws);
        closed++;
      } else open++;
    }
    this.#armedAt = 0;
    if (open > 0) await this.accepted();
    return closed;
  }

  /**
   * What the sweep does to the object's sleep, for the Inspector: while a run is pending, the shared
   * alarm wakes the object for it, one line (else none).
   */
  async wakes(): Promise<string[]> {
    const at = await this.#work?.due();
    return at === undefined ? [] : [`heartbeat sweep: the alarm wakes the object at ${new Date(at).toISOString()}, then every ${this.timeoutMs} ms while sockets are open`];
  }

  /** @returns the next multiple of `timeoutMs` after now */
  #nextRun(): number {
    return (Math.floor(Date.now() / this.timeoutMs) + 1) * this.timeoutMs;
  }
}
