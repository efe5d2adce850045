// The client's heartbeat: on an open socket it pings every `intervalMs`; when
// nothing arrives within `timeoutMs` of a ping, the socket is taken as dead.
// A dokit server with `heartbeat` set answers the ping from the runtime
// without waking the object. Off by default: a server without it would get
// each ping as an ordinary message.
import { HEARTBEAT_PING, HEARTBEAT_PONG } from "../protocol/heartbeat";
import type { AgentClientOptions, HeartbeatClientOptions } from "./types";

/** Default milliseconds between pings. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 25_000;
/** Default milliseconds a ping may go unanswered. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

/** The resolved heartbeat settings, or `undefined` when off. */
export function heartbeatSettings(options: AgentClientOptions<never>): Required<HeartbeatClientOptions> | undefined {
  const heartbeat = options.heartbeat;
  if (!heartbeat) return undefined;
  const given = heartbeat === true ? {} : heartbeat;
  return {
    intervalMs: given.intervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS,
    timeoutMs: given.timeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    ping: given.ping ?? HEARTBEAT_PING,
    pong: given.pong ?? HEARTBEAT_PONG,
  };
}

/** One socket's heartbeat: started when it opens, stopped when it is dropped. */
export class Heartbeat {
  /** The server's answer, which the client does not report as a message. */
  readonly pong: string;
  readonly #interval: ReturnType<typeof setInterval>;
  #deadline: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param settings - from heartbeatSettings
   * @param ping - sends the ping on the socket
   * @param dead - called once when a ping went unanswered
   */
  constructor(settings: Required<HeartbeatClientOptions>, ping: () => void, dead: () => void) {
    this.pong = settings.pong;
    this.#interval = setInterval(() => {
      ping();
      this.#deadline ??= setTimeout(() => {
        this.stop();
        dead();
      }, settings.timeoutMs);
    }, settings.intervalMs);
  }

  /** Something arrived from the server: the socket is alive. */
  alive(): void {
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  /** Stops pinging. */
  stop(): void {
    clearInterval(this.#interval);
    clearTimeout(this.#deadline);
  }
}
