// The connection loop of one AgentClient: it opens a socket (a link), keeps
// it alive with the heartbeat, and after a close waits with backoff and opens
// the next one, until `close()`, a final close code or spent retries end it.
// What the client does with an open socket, its frames and a dropped one
// (calls, queued messages, state, presence) is the client's, through
// LoopEvents.
import { MIN_UPTIME_MS, reconnectDelay } from "./backoff";
import { AgentConnectionError, isFinalCloseCode } from "./errors";
import { ClientEventTarget, closeEvent } from "./event-target";
import { Heartbeat, heartbeatSettings } from "./heartbeat";
import { openJsonLink } from "./link";
import type { Link, OpenLink } from "./link";
import type { AgentClientOptions } from "./types";
import { socketUrl } from "./url";

/** What the loop tells the client it serves. */
export interface LoopEvents {
  /** @returns the client's current options (`updateProperties()` changes them) */
  options(): AgentClientOptions<never>;
  /** @returns the client's current connection id */
  id(): string;
  /** Dispatches an `open`, `close` or `error` event on the client. */
  dispatchEvent(event: Event): boolean;
  /** A socket opened: send what waited for it. */
  opened(link: Link): void;
  /** A frame arrived on the current socket (heartbeat pongs left out). */
  frame(data: unknown): void;
  /** The current socket is forgotten (closed or replaced): its calls fail. */
  dropped(link: Link): void;
  /** The connection stopped for good: by `close()` (`null`) or a final close, spent retries or `giveUp()` (the error). */
  stopped(error: AgentConnectionError | null): void;
  /** An attempt failed before its socket opened; the next one starts in `delayMs`. */
  connectFailed(error: AgentConnectionError, retry: { attempt: number; delayMs: number }): void;
  /** Something the client's subscribers read changed. */
  changed(): void;
}

/** @returns `url` without its query (which may carry tokens), for messages that may be logged */
function withoutQuery(url: string): string {
  const queryAt = url.indexOf("?");
  return queryAt === -1 ? url : url.slice(0, queryAt);
}

/** One client's succession of sockets. */
export class ConnectionLoop {
  /** The URL of the latest connection attempt. */
  url = "";
  /** The current socket, open or opening. */
  link: Link | null = null;
  /** Whether the current socket is open. */
  open = false;
  /** Set by `close()` and by a final close; cleared by `reconnect()`. */
  closed = false;
  /** Set while the next socket's URL is being built. */
  #preparing = false;
  #attempt = 0;
  /** Why the latest attempt that never opened failed; cleared when a socket opens. */
  lastFailure: AgentConnectionError | null = null;
  #openedAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The open socket's heartbeat, when the option is on. */
  #heartbeat: Heartbeat | undefined;
  /** Bumped whenever a pending connection attempt must be abandoned. */
  #generation = 0;
  readonly #events: LoopEvents;

  /** @param events - the client the loop serves */
  constructor(events: LoopEvents) {
    this.#events = events;
  }

  /** The client's `readyState` (see AgentClient). */
  get readyState(): number {
    if (this.closed) return ClientEventTarget.CLOSED;
    if (this.link) return this.link.socket.readyState;
    return this.#preparing ? ClientEventTarget.CONNECTING : ClientEventTarget.CLOSED;
  }

  /** Stops for good: the client is told first, then the socket is closed with a `close` event dispatched at once. */
  close(code: number, reason: string | undefined): void {
    this.closed = true;
    this.#preparing = false;
    this.#generation++;
    clearTimeout(this.#timer);
    this.#events.stopped(null);
    this.#closeLink(code, reason);
  }

  /**
   * Stops for good with `error` (the client's `readyTimeout`): an opening socket is abandoned with a
   * `close` event, the client is told as for a final close.
   */
  giveUp(error: AgentConnectionError): void {
    if (this.closed) return;
    this.#preparing = false;
    this.#generation++;
    clearTimeout(this.#timer);
    const link = this.link;
    if (link) this.#drop(link);
    this.#end(error);
    if (link) {
      link.close();
      this.#events.dispatchEvent(closeEvent(error.code, error.reason, false));
    }
    this.#events.changed();
  }

  /** Connects again now; a socket still open or opening is closed first, with a `close` event. */
  reconnect(code: number, reason: string): void {
    this.closed = false;
    this.#attempt = 0;
    clearTimeout(this.#timer);
    this.#closeLink(code, reason);
    this.connect();
  }

  /** Starts a connection attempt. */
  connect(): void {
    const generation = ++this.#generation;
    this.#preparing = true;
    void (async () => {
      const options = this.#events.options();
      let url: string;
      let open: OpenLink;
      try {
        url = await socketUrl(options, this.#events.id());
        open = options.transport === "capnweb" ? (await import("./capnweb-link")).openCapnWebLink : openJsonLink;
      } catch (error) {
        // A failing `query()` (say, a token fetch) is retried with backoff like a failed socket.
        if (generation !== this.#generation) return;
        this.#preparing = false;
        console.error("dokit: could not prepare the connection", error);
        this.#events.dispatchEvent(new Event("error"));
        this.lastFailure = new AgentConnectionError(1006, String(error), false);
        return this.#retry(this.lastFailure);
      }
      if (generation !== this.#generation || this.closed) return;
      let link: Link;
      try {
        link = open(url, {
          onOpen: () => this.#onOpen(link),
          onFrame: (data) => this.#onFrame(link, data),
          onClose: (code, reason, wasClean) => this.#onClose(link, code, reason, wasClean),
          onError: () => link === this.link && this.#events.dispatchEvent(new Event("error")),
        });
      } catch (error) {
        // The WebSocket constructor throws only for a malformed URL: retrying cannot help.
        this.#preparing = false;
        return this.#end(new AgentConnectionError(1006, String(error), false));
      }
      this.#preparing = false;
      this.url = url;
      this.link = link;
      this.#timer = setTimeout(() => {
        if (this.link !== link || this.open) return;
        this.#onClose(link, 1006, "Connection timed out", false);
        link.close();
      }, options.connectionTimeout ?? 4000);
    })();
  }

  /** Closes the current socket on the client's behalf, dispatching its `close` event at once. */
  #closeLink(code: number, reason: string | undefined): void {
    const link = this.link;
    if (!link) return;
    this.#drop(link);
    link.close(code, reason);
    this.#events.dispatchEvent(closeEvent(code, reason ?? "", true));
  }

  #onOpen(link: Link): void {
    if (link !== this.link) return;
    clearTimeout(this.#timer);
    this.open = true;
    this.lastFailure = null;
    this.#openedAt = Date.now();
    this.#startHeartbeat(link);
    this.#events.opened(link);
  }

  #onFrame(link: Link, data: unknown): void {
    if (link !== this.link) return;
    const heartbeat = this.#heartbeat;
    if (heartbeat) {
      heartbeat.alive();
      // The server's answer to a ping is no message.
      if (data === heartbeat.pong) return;
    }
    this.#events.frame(data);
  }

  #onClose(link: Link, code: number, reason: string, wasClean: boolean): void {
    if (link !== this.link) return;
    const opened = this.open;
    const uptime = opened ? Date.now() - this.#openedAt : 0;
    this.#drop(link);
    if (!this.closed) {
      if (isFinalCloseCode(code)) this.#end(new AgentConnectionError(code, reason, wasClean));
      else if (opened) {
        if (uptime >= MIN_UPTIME_MS) this.#attempt = 0;
        this.#retry(new AgentConnectionError(code, reason, wasClean));
      } else {
        // Never opened: nothing listening, a refused or failed handshake, or connectionTimeout.
        const what = reason || "no WebSocket opened: nothing listening there, or the upgrade was refused";
        this.lastFailure = new AgentConnectionError(code, `dokit: could not connect to ${withoutQuery(this.url)} (${what})`, wasClean);
        this.#retry(this.lastFailure, true);
      }
    }
    this.#events.dispatchEvent(closeEvent(code, reason, wasClean));
    this.#events.changed();
  }

  /** Forgets a socket and tells the client. */
  #drop(link: Link): void {
    this.link = null;
    this.open = false;
    clearTimeout(this.#timer);
    this.#heartbeat?.stop();
    this.#heartbeat = undefined;
    this.#events.dropped(link);
  }

  /** Schedules the next attempt (telling the client when the failed one never opened), or ends the connection when retries are spent. */
  #retry(error: AgentConnectionError, neverOpened = false): void {
    this.#attempt++;
    if (this.#attempt > (this.#events.options().maxRetries ?? Number.POSITIVE_INFINITY)) return this.#end(error);
    const delayMs = reconnectDelay(this.#events.options(), this.#attempt);
    this.#timer = setTimeout(() => this.connect(), delayMs);
    if (neverOpened) this.#events.connectFailed(error, { attempt: this.#attempt, delayMs });
  }

  /** A final close: the client is told, later calls reject at once. */
  #end(error: AgentConnectionError): void {
    this.closed = true;
    this.#events.stopped(error);
  }

  /** Pings on the open socket; a ping left unanswered closes it (1006 `Heartbeat timed out`) and the client reconnects. */
  #startHeartbeat(link: Link): void {
    const settings = link.invoke ? undefined : heartbeatSettings(this.#events.options());
    if (!settings) return;
    this.#heartbeat = new Heartbeat(
      settings,
      () => link.send(settings.ping),
      () => {
        if (link !== this.link) return;
        this.#onClose(link, 1006, "Heartbeat timed out", false);
        link.close();
      },
    );
  }
}
