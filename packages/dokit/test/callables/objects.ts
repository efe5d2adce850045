import { DurableObject, RpcTarget } from "cloudflare:workers";
import { z } from "zod";
import { Callables } from "../../src/callables";
import { capnweb } from "../../src/capnweb";
import { Observability } from "../../src/observability";
import { getCurrentAgent, Lifecycle, Refusal } from "../../src/lifecycle";
import { type WebSocketHandlers, WebSockets } from "../../src/websockets";

/** What every test host offers the callables and the tests. */
export interface TestHost {
  /** Differs after a hibernation wake. */
  readonly instance: string;
  /** What the handlers saw, in order. */
  readonly events: string[];
}

/** A live object handed out by reference over Cap'n Web. */
export class Counter extends RpcTarget {
  #value: number;
  constructor(start: number) {
    super();
    this.#value = start;
  }
  increment(by = 1): number {
    this.#value += by;
    return this.#value;
  }
  value(): number {
    return this.#value;
  }
  caller(): string | null {
    return getCurrentAgent().connection?.id ?? null;
  }
}

class BaseCallables extends RpcTarget {
  inherited(): string {
    return "from the base class";
  }
  shadowed(): string {
    return "base method";
  }
}

/** The callables every host exposes. */
export class TestCallables extends BaseCallables {
  readonly #host: TestHost;
  /** An instance arrow field: never callable. */
  readonly arrow = () => "arrow";

  constructor(host: TestHost) {
    super();
    this.#host = host;
  }

  /** A getter: never callable. */
  get secret(): string {
    return "getter";
  }

  /** Declared on the class, but named like an Object.prototype member: never callable. */
  override toString(): string {
    return "exposed";
  }

  /** A getter shadowing a base method: the nearest declaration wins, so neither is callable. */
  // @ts-expect-error -- deliberately replaces the base method with an accessor
  get shadowed(): string {
    return "getter";
  }

  add(a: number, b: number): number {
    return a + b;
  }

  async echo(value: unknown): Promise<unknown> {
    return value;
  }

  nothing(): void {}

  nil(): null {
    return null;
  }

  refuse(message: string): never {
    throw new Refusal(message);
  }

  fail(message: string): never {
    throw new Error(message);
  }

  async failLater(message: string): Promise<never> {
    await Promise.resolve();
    throw new TypeError(message);
  }

  countdown(from: number): ReadableStream<number> {
    return new ReadableStream<number>({
      start(controller) {
        for (let n = from; n >= 0; n--) controller.enqueue(n);
        controller.close();
      },
    });
  }

  /** Two chunks, then an error. */
  brokenStream(): ReadableStream<number> {
    let pulls = 0;
    return new ReadableStream<number>({
      pull(controller) {
        pulls++;
        if (pulls <= 2) controller.enqueue(pulls);
        else controller.error(new Error("stream broke"));
      },
    });
  }

  counter(start: number): Counter {
    return new Counter(start);
  }

  big(): bigint {
    return 10n;
  }

  async delayed(value: number, ms: number): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return value;
  }

  whoami(): { agentIsHost: boolean; connection: string | null; instance: string } {
    const current = getCurrentAgent();
    return { agentIsHost: current.agent === this.#host, connection: current.connection?.id ?? null, instance: this.#host.instance };
  }

  /** whoami, read after a timer: the context must survive the method's own awaits. */
  async whoamiLater(ms: number): Promise<{ agentIsHost: boolean; connection: string | null; instance: string }> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.whoami();
  }

  /** Checked by argument schemas where a host installs them. */
  move(id: string, column: number): { id: string; column: number; types: string[] } {
    return { id, column, types: [typeof id, typeof column] };
  }
}

/** Argument schemas (zod 4) for the hosts that install them. */
export const schemas = { move: { id: z.string(), column: z.coerce.number().int() } };

/** Handlers that record every event and echo user messages. */
function recordingHandlers(host: TestHost): WebSocketHandlers {
  return {
    onConnect: (connection, ctx) => {
      if (new URL(ctx.request.url).searchParams.has("failConnect")) throw new Error("onConnect refused");
      host.events.push(`connect:${connection.id}`);
      connection.send(JSON.stringify({ type: "welcome", tags: connection.tags }));
    },
    onMessage: (connection, message) => {
      const text = typeof message === "string" ? message : `binary:${message.byteLength}`;
      host.events.push(`message:${connection.id}:${text}`);
      connection.send(`echo:${text}`);
    },
    onClose: (connection, code, reason) => {
      host.events.push(`close:${connection.id}:${code}:${reason}`);
    },
  };
}

const synced = { get: () => ({ count: 1 }), stateFrame: () => JSON.stringify({ type: "cf_agent_state", state: { count: 1 } }) };
const tags = (_connection: unknown, ctx: { request: Request }) => {
  const room = new URL(ctx.request.url).searchParams.get("room");
  return room ? [`room:${room}`] : [];
};

/** Shared DO RPC methods the tests call through the stub. */
abstract class Host extends DurableObject<Env> implements TestHost {
  readonly instance = crypto.randomUUID();
  readonly events: string[] = [];
  abstract readonly webSockets: WebSockets;
  abstract readonly lifecycle: Lifecycle;

  async log(): Promise<string[]> {
    return this.events;
  }

  async connectionIds(): Promise<string[]> {
    await this.lifecycle.start();
    return [...this.webSockets.getConnections()].map((connection) => connection.id);
  }

  async broadcast(message: string): Promise<void> {
    await this.lifecycle.start();
    this.webSockets.broadcast(message);
  }
}

/** The short form: `new WebSockets({ callables: target })`. */
export class CallWrapped extends Host {
  readonly webSockets: WebSockets = new WebSockets({
    callables: new TestCallables(this),
    state: synced,
    getConnectionTags: tags,
    handlers: recordingHandlers(this),
    capnweb,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** Callables installed on its own, with argument schemas. */
export class CallSeparate extends Host {
  readonly callables = new Callables(new TestCallables(this), { args: schemas });
  readonly webSockets: WebSockets = new WebSockets({
    state: synced,
    getConnectionTags: tags,
    handlers: recordingHandlers(this),
    capnweb,
  });
  // Events on (nothing is published while nobody subscribes): calls over Cap'n Web publish `rpc` like rpc frames.
  readonly lifecycle = Lifecycle.install(this).use(this.callables).use(this.webSockets).use(new Observability());
}

/** A Callables with argument schemas, handed to WebSockets: `new WebSockets({ callables: new Callables(target, { args }) })`. */
export class CallPassed extends Host {
  readonly webSockets: WebSockets = new WebSockets({
    callables: new Callables(new TestCallables(this), { args: schemas }),
    state: synced,
    getConnectionTags: tags,
    handlers: recordingHandlers(this),
    capnweb,
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/** WebSockets without callables and without the Cap'n Web transport. */
export class CallBare extends Host {
  readonly webSockets: WebSockets = new WebSockets({ handlers: recordingHandlers(this) });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}
