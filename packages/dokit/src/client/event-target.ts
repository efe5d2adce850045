// The WebSocket-shaped event surface of AgentClient: the ready-state
// constants, `on<event>` handler properties and typed listeners, so code
// written for a WebSocket or a PartySocket runs unchanged.

/** The events an AgentClient dispatches, as on a WebSocket. */
export interface AgentClientEventMap {
  /** A socket opened. */
  open: Event;
  /** A frame arrived (after the client has handled it). */
  message: MessageEvent;
  /** A socket closed, or `close()`/`reconnect()` ended it. */
  close: CloseEvent;
  /** A socket reported an error, or a connection attempt could not be prepared. */
  error: Event;
}

/** Listener options accepted by `addEventListener`, in the shape every runtime shares. */
export type ListenerOptions = boolean | { capture?: boolean; once?: boolean; passive?: boolean; signal?: AbortSignal };

/** An `on<event>` handler property. */
type Handler<E> = ((event: E) => void) | null;

/** The typed listener overloads, merged into the class below. */
export interface ClientEventTarget {
  /**
   * Adds a listener; typed by event name.
   * @param type - `open`, `message`, `close` or `error`
   * @param listener - runs with the event
   * @param options - `once`, `signal`, …
   */
  addEventListener<K extends keyof AgentClientEventMap>(
    type: K,
    listener: (event: AgentClientEventMap[K]) => void,
    options?: ListenerOptions,
  ): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: ListenerOptions): void;
  /**
   * Removes a listener added with `addEventListener`.
   * @param type - the event name
   * @param listener - the same function
   * @param options - the same `capture` flag
   */
  removeEventListener<K extends keyof AgentClientEventMap>(
    type: K,
    listener: (event: AgentClientEventMap[K]) => void,
    options?: ListenerOptions,
  ): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: ListenerOptions): void;
}

/** An EventTarget with the WebSocket ready-state constants and `on<event>` handler properties. */
export class ClientEventTarget extends EventTarget {
  /** `readyState` before the socket opens. */
  static readonly CONNECTING = 0;
  /** `readyState` while the socket is open. */
  static readonly OPEN = 1;
  /** `readyState` while the socket is closing. */
  static readonly CLOSING = 2;
  /** `readyState` when there is no open or opening socket. */
  static readonly CLOSED = 3;

  /** `readyState` before the socket opens. */
  get CONNECTING(): 0 {
    return 0;
  }
  /** `readyState` while the socket is open. */
  get OPEN(): 1 {
    return 1;
  }
  /** `readyState` while the socket is closing. */
  get CLOSING(): 2 {
    return 2;
  }
  /** `readyState` when there is no open or opening socket. */
  get CLOSED(): 3 {
    return 3;
  }

  /** Runs before `open` listeners. */
  onopen: Handler<Event> = null;
  /** Runs before `message` listeners. */
  onmessage: Handler<MessageEvent> = null;
  /** Runs before `close` listeners. */
  onclose: Handler<CloseEvent> = null;
  /** Runs before `error` listeners. */
  onerror: Handler<Event> = null;

  /**
   * Runs the matching `on<event>` property, then the listeners. A throwing
   * handler is reported asynchronously, as EventTarget does for listeners,
   * so it cannot stop the listeners or the client's own bookkeeping.
   * @param event - the event to dispatch
   * @returns false when a listener called `preventDefault()` on a cancelable event
   */
  override dispatchEvent(event: Event): boolean {
    const handler = handlerFor(this, event.type);
    if (handler) {
      try {
        handler.call(this, event);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    return super.dispatchEvent(event);
  }
}

/** @returns a `close` event: a CloseEvent where the runtime has one, else an Event with its fields */
export function closeEvent(code: number, reason: string, wasClean: boolean): Event {
  const init = { code, reason, wasClean };
  return typeof CloseEvent === "function" ? new CloseEvent("close", init) : Object.assign(new Event("close"), init);
}

/** @returns the `on<type>` property of `target` when it is a function */
function handlerFor(target: ClientEventTarget, type: string): ((event: Event) => void) | undefined {
  const handlers: Record<string, Handler<never>> = {
    open: target.onopen,
    message: target.onmessage,
    close: target.onclose,
    error: target.onerror,
  };
  const handler = handlers[type];
  // SAFETY: each property holds a handler for the event type it is named after.
  return typeof handler === "function" ? (handler as (event: Event) => void) : undefined;
}
