import { DurableObject } from "cloudflare:workers";
import { type Capability, type Claims, type Connection, getCurrentAgent, Lifecycle } from "../../src/lifecycle";
import { isStateFrame, STATE, STATE_ERROR } from "../../src/protocol";
import { WebSockets } from "../../src/websockets";

/**
 * A minimal synced value for these tests (the real one is dokit/state):
 * kept in KV storage, client frames refused on readonly connections.
 */
class TestState implements Capability {
  readonly capabilityName = "TestState";
  value: unknown;
  onChanged: (source: Connection | "server") => void = () => {};
  #claims: Claims | undefined;
  constructor(initial: unknown) {
    this.value = initial;
  }
  attach(claims: Claims): void {
    this.#claims = claims;
    claims.onStart(async () => {
      this.value = (await claims.lifecycle.ctx.storage.get("value")) ?? this.value;
    });
    claims.frame(
      "cf_agent_state",
      async (connection, frame, context) => {
        if (!isStateFrame(frame)) return false;
        if (context.readonly) {
          connection.send(JSON.stringify({ type: STATE_ERROR, error: "Connection is readonly" }));
          return true;
        }
        await this.set(frame.state, connection);
        return true;
      },
      { protocolOnly: true },
    );
  }
  get(): unknown {
    return this.value;
  }
  stateFrame(): string {
    return JSON.stringify({ type: STATE, state: this.value ?? null });
  }
  async set(value: unknown, source: Connection | "server" = "server"): Promise<void> {
    this.value = value;
    await this.#claims?.lifecycle.ctx.storage.put("value", value);
    this.onChanged(source);
  }
}

const param = (request: Request, key: string) => new URL(request.url).searchParams.get(key);

/**
 * Another capability's connect frame: `{"type":"extra"}` for connections opened
 * with `?extra=1`; the source throws for `?extra=throw`.
 */
class ExtraConnectFrame implements Capability {
  readonly capabilityName = "ExtraConnectFrame";
  attach(claims: Claims): void {
    claims.connectFrames((connection) => {
      const extra = connection.uri === null ? null : new URL(connection.uri).searchParams.get("extra");
      if (extra === "throw") throw new Error("the connect frame source failed");
      return extra === "1" ? JSON.stringify({ type: "extra" }) : undefined;
    });
  }
}

/** The main scenario: state, tags, readonly, protocol decisions, handlers. */
export class WsRoom extends DurableObject<Env> {
  readonly shared = new TestState({ count: 0 });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.shared,
    getConnectionTags: (_connection, ctx) => {
      const room = param(ctx.request, "room");
      const extra = param(ctx.request, "tags");
      return [...(room ? [`room:${room}`] : []), ...(extra ? extra.split(",") : [])];
    },
    readonly: (_connection, ctx) => param(ctx.request, "mode") === "view",
    protocol: (_connection, ctx) => param(ctx.request, "client") !== "sensor",
    handlers: {
      onConnect: (connection, ctx) => {
        const current = getCurrentAgent();
        connection.send(
          JSON.stringify({
            type: "welcome",
            id: connection.id,
            tags: connection.tags,
            uri: connection.uri,
            contextOk: current.agent === this && current.connection === connection && current.request === ctx.request,
          }),
        );
      },
      onMessage: (connection, message) => this.#command(connection, message),
      onClose: (connection, code, reason) => {
        this.closes.push({ id: connection.id, code, reason });
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.shared).use(new ExtraConnectFrame()).use(this.webSockets);
  closes: { id: string; code: number; reason: string }[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.shared.onChanged = (source) => this.webSockets.broadcastState(source === "server" ? null : source);
    this.webSockets.use({
      onMessage: (connection, message) => {
        if (message !== "ping") return false;
        connection.send("pong");
        return true;
      },
    });
  }

  #command(connection: Connection, message: string | ArrayBuffer): void {
    if (typeof message !== "string") {
      connection.send(`binary:${message.byteLength}`);
      return;
    }
    if (!message.startsWith("!")) {
      connection.send(`echo:${message.length > 100 ? `${message.length} chars` : message}`);
      return;
    }
    const [command, ...rest] = message.slice(1).split(" ");
    const arg = rest.join(" ");
    const reply = (value: unknown) => connection.send(JSON.stringify({ type: "reply", command, value }));
    switch (command) {
      case "setState":
        return reply(connection.setState(JSON.parse(arg)));
      case "readState":
        return reply(connection.state);
      case "bigState":
      case "fnState":
        try {
          connection.setState(command === "fnState" ? { fn: () => arg } : { blob: "x".repeat(Number(arg)) });
          return reply("stored");
        } catch (error) {
          return reply({ code: (error as { code?: string }).code, message: (error as Error).message });
        }
      case "context":
        return reply(getCurrentAgent().connection === connection && getCurrentAgent().agent === this);
      case "contextLater":
        // Work the handler starts without awaiting it, read after a timer (other messages run meanwhile).
        void new Promise((resolve) => setTimeout(resolve, Number(arg))).then(() =>
          reply(getCurrentAgent().connection === connection && getCurrentAgent().agent === this),
        );
        return;
      case "broadcast": {
        const { text, except, tag } = JSON.parse(arg) as { text: string; except?: string; tag?: string };
        this.webSockets.broadcast(text, { except, tag });
        return reply("sent");
      }
      case "serverSet":
        void this.shared.set(JSON.parse(arg));
        return;
      case "flags":
        return reply({ readonly: this.webSockets.isReadonly(connection), protocol: this.webSockets.isProtocolEnabled(connection) });
    }
  }

  /** DO RPC: ids of open connections, optionally with one tag. */
  async ids(tag?: string): Promise<string[]> {
    await this.lifecycle.start();
    return [...this.webSockets.getConnections(tag)].map((c) => c.id).sort();
  }

  /** DO RPC: the open-connection count, and how many getConnections() yields. */
  async count(): Promise<{ count: number; listed: number }> {
    await this.lifecycle.start();
    return { count: this.webSockets.count(), listed: [...this.webSockets.getConnections()].length };
  }

  /** DO RPC: counts, closes one connection as server code does (its own close), and counts again in the same turn. */
  async closeAndCount(id: string): Promise<{ before: number; after: number; listed: number }> {
    await this.lifecycle.start();
    const before = this.webSockets.count();
    this.webSockets.getConnection(id)?.close(4000, "closed by the server");
    return { before, after: this.webSockets.count(), listed: [...this.webSockets.getConnections()].length };
  }

  async connection(id: string): Promise<{ id: string; tags: string[]; state: unknown } | null> {
    await this.lifecycle.start();
    const c = this.webSockets.getConnection(id);
    return c ? { id: c.id, tags: [...c.tags], state: c.state } : null;
  }

  async setServerState(value: unknown): Promise<void> {
    await this.lifecycle.start();
    await this.shared.set(value);
  }

  async promote(id: string): Promise<boolean> {
    await this.lifecycle.start();
    const connection = this.webSockets.getConnection(id);
    if (!connection) return false;
    this.webSockets.setReadonly(connection, false);
    return this.webSockets.isReadonly(connection) === false;
  }

  async destroy(): Promise<void> {
    await this.lifecycle.destroy();
  }

  async closeLog() {
    return this.closes;
  }
}

/** WebSockets with no state, no handlers: identity only. */
export class WsBare extends DurableObject<Env> {
  readonly webSockets = new WebSockets();
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
}

/**
 * State and onMessage, and nothing that receives a connection while it opens (no decisions, no
 * onConnect, no added connect frames): its connections open plain, as the runtime made them.
 * `onMessage` answers with what the connection says of itself.
 */
export class WsPlain extends DurableObject<Env> {
  #broken = false;
  readonly webSockets: WebSockets = new WebSockets({
    state: {
      get: () => ({ count: 0 }),
      stateFrame: () => {
        if (this.#broken) throw new Error("the state could not be read");
        return JSON.stringify({ type: STATE, state: { count: 0 } });
      },
    },
    handlers: {
      onMessage: (connection) => connection.send(JSON.stringify({ id: connection.id, tags: connection.tags, uri: connection.uri, state: connection.state })),
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  /** Makes reading the state throw, so the next connection fails while it opens. */
  breakState(): void {
    this.#broken = true;
  }
}

/** protocol: false: the host drives the connect sequence and applies state frames itself. */
export class WsManual extends DurableObject<Env> {
  readonly shared = new TestState({ online: 0 });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.shared,
    protocol: false,
    handlers: {
      onConnect: (connection) => {
        connection.send("before-frames");
        this.webSockets.sendConnectFrames(connection, { agent: "custom-agent" });
      },
      onMessage: (connection, message) => {
        if (typeof message !== "string") return;
        let frame: unknown;
        try {
          frame = JSON.parse(message);
        } catch {
          frame = undefined;
        }
        if (this.webSockets.applyStateFrame(connection, frame)) {
          connection.send("applied");
          return;
        }
        connection.send(`manual:${message}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.shared).use(this.webSockets);

  async value(): Promise<unknown> {
    await this.lifecycle.start();
    return this.shared.get();
  }
}

/** onConnect throws for ?fail=1. */
export class WsFailingConnect extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    handlers: {
      onConnect: (_connection, ctx) => {
        if (param(ctx.request, "fail") === "1") throw new Error("secret failure details");
      },
      onMessage: (connection, message) => connection.send(`ok:${String(message)}`),
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);

  async ids(): Promise<string[]> {
    await this.lifecycle.start();
    return [...this.webSockets.getConnections()].map((c) => c.id);
  }
}

/** An existing object that accepts some sockets itself and delegates the rest to dokit. */
export class WsMixedHost extends DurableObject<Env> {
  readonly webSockets = new WebSockets({
    handlers: {
      onMessage: (connection, message) => {
        if (message === "all") this.webSockets.broadcast("everyone");
        else connection.send(`dokit:${String(message)}`);
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch", "webSocketMessage", "webSocketClose"] }).use(
    this.webSockets,
  );

  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname.endsWith("/raw")) {
      const { 0: client, 1: server } = new WebSocketPair();
      this.ctx.acceptWebSocket(server, ["raw"]);
      server.serializeAttachment("the host's own socket");
      return new Response(null, { status: 101, webSocket: client });
    }
    return (await this.lifecycle.fetch(request)) ?? new Response("not found", { status: 404 });
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (await this.lifecycle.webSocketMessage(ws, message)) return;
    ws.send(`raw:${String(message)}`);
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string, wasClean: boolean): Promise<void> {
    if (await this.lifecycle.webSocketClose(ws, code, reason, wasClean)) return;
    ws.close(code, reason);
  }

  async counts(): Promise<{ dokit: number; count: number; all: number }> {
    await this.lifecycle.start();
    return { dokit: [...this.webSockets.getConnections()].length, count: this.webSockets.count(), all: this.ctx.getWebSockets().length };
  }
}
