import { DurableObject, RpcTarget } from "cloudflare:workers";
import { z } from "zod";
import { Callables } from "../../src/callables";
import { type Capability, type Claims, Lifecycle } from "../../src/lifecycle";
import { type Wakeable, WORKS_UNATTACHED } from "../../src/lifecycle/wake";
import { State, type StateSource } from "../../src/state";
import { WebSockets } from "../../src/websockets";

/** The synced board's schema: trims titles, coerces versions, refuses negatives. */
export const BoardSchema = z.object({
  title: z.string().trim().max(40),
  cards: z.array(z.string()).max(100),
  version: z.coerce.number().int().nonnegative(),
  from: z.string().optional(),
});
export type Board = z.output<typeof BoardSchema>;

const sourceId = (source: StateSource) => (source === "server" ? "server" : source.id);

/**
 * WebSockets + State with a zod schema; ?mode=view is readonly, ?client=sensor has no protocol.
 * Its onChanged also calls broadcastState, as code written for the reference does: the state syncs
 * itself, so that call sends nothing more.
 */
export class SyncedBoard extends DurableObject<Env> {
  /** Every onChanged call: the value and who sent it. */
  readonly changes: { state: Board; source: string }[] = [];
  readonly board = new State({
    initialState: { title: "Board", cards: [], version: 0 },
    validate: BoardSchema,
    onChanged: (state, source) => {
      this.changes.push({ state, source: sourceId(source) });
      this.webSockets.broadcastState(source);
    },
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.board,
    readonly: (_c, ctx) => new URL(ctx.request.url).searchParams.get("mode") === "view",
    protocol: (_c, ctx) => new URL(ctx.request.url).searchParams.get("client") !== "sensor",
    handlers: {
      // "ping" → "pong" (every frame this connection sent before has been handled); anything else echoes.
      onMessage: (connection, message) => {
        connection.send(message === "ping" ? "pong" : `unhandled:${String(message)}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.board).use(this.webSockets);

  /** A server-side change. */
  rename(title: string): Board {
    const current = this.board.get();
    return this.board.set({ ...current, title, version: current.version + 1 });
  }

  /** @returns the in-memory value */
  value(): Board {
    return this.board.get();
  }
}

/** The same board synced by itself: no onChanged. `rename` is a DO RPC method, so it can run on an object that waits to be wired. */
export class AutoBoard extends DurableObject<Env> {
  readonly board = new State({ initialState: { title: "Board", cards: [], version: 0 }, validate: BoardSchema });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.board,
    handlers: { onMessage: (connection, message) => connection.send(message === "ping" ? "pong" : `unhandled:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.board).use(this.webSockets);

  /** A server-side change. */
  async rename(title: string): Promise<Board> {
    await this.lifecycle.start();
    const current = this.board.get();
    return this.board.set({ ...current, title, version: current.version + 1 });
  }
}

type Presence = { online: number };

/** protocol: false and syncState: false, driving the connect sequence and state frames by hand (docs/state.md's PresenceAgent). */
export class ManualPresence extends DurableObject<Env> {
  readonly presence: State<Presence> = new State<Presence>({
    initialState: { online: 0 },
    onChanged: (_state, source) => this.webSockets.broadcastState(source),
  });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.presence,
    syncState: false,
    protocol: false,
    handlers: {
      onConnect: (connection) => this.webSockets.sendConnectFrames(connection),
      onMessage: (connection, message) => {
        if (typeof message !== "string") return;
        const frame: unknown = JSON.parse(message);
        if (this.webSockets.applyStateFrame(connection, frame)) return;
        connection.send(`echo:${message}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.presence).use(this.webSockets);
}

/** State alone (no WebSockets) with a function validator and a hook that can fail. */
export class PlainStore extends DurableObject<Env> {
  changes = 0;
  readonly store = new State<unknown>({
    initialState: { seeded: true, at: "initial" },
    validate: (next) => {
      if (next === "forbidden") throw new Error("the value 'forbidden' is not allowed here");
    },
    onChanged: (state) => {
      this.changes++;
      if (state === "throw") throw new Error("hook failed synchronously");
      if (state === "reject") return Promise.reject(new Error("hook failed asynchronously"));
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.store);

  read(): unknown {
    return this.store.get();
  }

  write(value: unknown): unknown {
    return this.store.set(value);
  }

  /** @returns the stored state, or the error's code and message */
  tryWrite(value: unknown): { ok: true; value: unknown } | { ok: false; code: string; message: string } {
    try {
      return { ok: true, value: this.store.set(value) };
    } catch (error) {
      const { code, message } = error as { code: string; message: string };
      return { ok: false, code, message };
    }
  }
}

/** A State on a class bound without SQLite (`new_classes`): reading it must say how to bind the class. */
export class KvOnlyStore extends DurableObject<Env> {
  readonly store = new State({ initialState: { count: 0 } });
  readonly lifecycle = Lifecycle.install(this).use(this.store);

  /** @returns the error's code and message when reading the state fails */
  async tryRead(): Promise<{ code: string; message: string } | "read"> {
    await this.lifecycle.start();
    try {
      this.store.get();
      return "read";
    } catch (error) {
      const { code, message } = error as { code: string; message: string };
      return { code, message };
    }
  }
}

/** A schema with an async refinement: set() must refuse it clearly. */
export class AsyncSchemaStore extends DurableObject<Env> {
  readonly store = new State({
    initialState: "ok",
    validate: z.string().refine(async (value) => value !== "bad"),
  });
  readonly lifecycle = Lifecycle.install(this).use(this.store);
}

// ------------------------------------------------------- wiring on demand (docs/lifecycle.md)

/** Counts its attaches on the host, to show which wakes wire the object's capabilities. */
class CountedSockets extends WebSockets {
  override attach(claims: Claims): void {
    (claims.lifecycle.host as { attached: number }).attached++;
    super.attach(claims);
  }
}

/** Callables served by the WebSockets short form. */
class WakeCallables extends RpcTarget {
  add(a: number, b: number): number {
    return a + b;
  }
}

/** State + WebSockets + callables, dokit's own capabilities only: a later object attaches them when an event needs the table. */
export class WakeRoom extends DurableObject<Env> {
  /** Attaches of the WebSockets in this instance (this wake). */
  attached = 0;
  readonly counter = new State({ initialState: { count: 0 } });
  readonly webSockets: WebSockets = new CountedSockets({
    state: this.counter,
    callables: new WakeCallables(),
    handlers: {
      onMessage: (connection, message) => {
        if (message === "ping") connection.send("pong");
        else if (message === "count") connection.send(`count:${this.counter.get().count}`);
        else if (message === "all") this.webSockets.broadcast("all");
        else connection.send(`unhandled:${String(message)}`);
      },
      onClose: (connection) => {
        this.ctx.storage.kv.put("closed", connection.id);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.counter).use(this.webSockets);

  /** @returns how often this instance attached its WebSockets, and the id of the last connection whose close ran onClose */
  report(): { attached: number; closed: string | null } {
    return { attached: this.attached, closed: (this.ctx.storage.kv.get("closed") as string | undefined) ?? null };
  }
}

/** A capability of the user's own (not marked for wiring on demand): it claims a frame type. */
class Shout implements Capability {
  readonly capabilityName = "Shout";
  attach(claims: Claims): void {
    claims.frame("shout", (connection, frame) => connection.send(String(frame.text).toUpperCase()));
  }
}

/** WakeRoom's capabilities plus a user's: every object attaches them all as it is built. */
export class WakeEager extends DurableObject<Env> {
  attached = 0;
  readonly webSockets: WebSockets = new CountedSockets({
    handlers: { onMessage: (connection, message) => connection.send(message === "ping" ? "pong" : `unhandled:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Shout()).use(this.webSockets);

  report(): { attached: number } {
    return { attached: this.attached };
  }
}

/** Uses State and WebSockets, or (objects named `bare-…`) WebSockets alone (which uses its State in turn): other capabilities than the class's first object. */
export class WakeVarying extends DurableObject<Env> {
  attached = 0;
  readonly counter = new State({ initialState: { count: 0 } });
  readonly webSockets: WebSockets = new CountedSockets({
    state: this.counter,
    handlers: { onMessage: (connection, message) => connection.send(message === "ping" ? "pong" : `unhandled:${String(message)}`) },
  });
  readonly lifecycle = this.ctx.id.name?.startsWith("bare-")
    ? Lifecycle.install(this).use(this.webSockets)
    : Lifecycle.install(this).use(this.counter).use(this.webSockets);

  report(): { attached: number } {
    return { attached: this.attached };
  }
}

/**
 * Callables at the top; objects named `dup-…` also give WebSockets a target with the same
 * methods, a conflict the class's first object did not have (options that differ by object).
 */
export class WakeConflict extends DurableObject<Env> {
  readonly calls = new Callables(new WakeCallables());
  readonly webSockets: WebSockets = new WebSockets({
    callables: this.ctx.id.name?.startsWith("dup-") ? new WakeCallables() : undefined,
    handlers: { onMessage: (connection, message) => connection.send(`echo:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.calls).use(this.webSockets);
}

/**
 * A capability marked, as dokit's own are, to work before it is attached; it claims the frame type
 * `note`, declaring that a note needs the object wired, or (`declared: false`) not declaring it.
 */
class Notes implements Capability {
  readonly capabilityName = "Notes";
  readonly #declared: boolean;
  constructor(declared: boolean) {
    this.#declared = declared;
  }
  attach(claims: Claims): void {
    claims.frame("note", (connection, frame) => connection.send(`noted:${String(frame.text)}`), { needsWiring: this.#declared });
  }
}
(Notes.prototype as Wakeable)[WORKS_UNATTACHED] = true;

/** Notes whose claim declares that a note needs the object wired: a later object waits, and a note wires it. */
export class WakeNotes extends DurableObject<Env> {
  attached = 0;
  readonly webSockets: WebSockets = new CountedSockets({
    handlers: { onMessage: (connection, message) => connection.send(message === "ping" ? "pong" : `unhandled:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Notes(true)).use(this.webSockets);

  report(): { attached: number } {
    return { attached: this.attached };
  }
}

/** Notes whose claim does not declare it: every object of the class is wired as it is built. */
export class WakeUndeclared extends DurableObject<Env> {
  attached = 0;
  readonly webSockets: WebSockets = new CountedSockets({
    handlers: { onMessage: (connection, message) => connection.send(message === "ping" ? "pong" : `unhandled:${String(message)}`) },
  });
  readonly lifecycle = Lifecycle.install(this).use(new Notes(false)).use(this.webSockets);

  report(): { attached: number } {
    return { attached: this.attached };
  }
}
