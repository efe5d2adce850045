// A copy of bench/worker/raw.ts's room, on purpose: the same code as a class of its own, so
// `node bench/wake.ts --rooms=raw,rawtwin,…` reads what two rooms of identical code differ by
// (the noise floor of a room's difference to raw; bench/README.md, "How noisy each figure is").
// Not a subclass: a subclass shares raw's methods, and reads up to 120 µs apart from it in one run.
import { DurableObject } from "cloudflare:workers";
import { classify, INITIAL_STATE } from "../worker/app";

type RpcFrame = { type: "rpc"; id: string; method: string; args: unknown[] };
const METHODS: Record<string, (...args: unknown[]) => unknown> = Object.assign(Object.create(null), {
  echo: (value: unknown) => value,
});

export class RawTwin extends DurableObject {
  readonly #instance = crypto.randomUUID();
  #state: unknown;
  #loaded = false;

  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("ok");
    const id = new URL(request.url).searchParams.get("_pk") || crypto.randomUUID();
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [id]);
    server.serializeAttachment({ id });
    server.send(JSON.stringify({ type: "cf_agent_identity", name: this.ctx.id.name ?? this.ctx.id.toString(), agent: "raw-room", stateFollows: true }));
    server.send(JSON.stringify({ type: "cf_agent_state", state: this.#getState() }));
    return new Response(null, { status: 101, webSocket: client });
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    if (typeof message === "string" && message.charCodeAt(0) === 123 /* { */) {
      let frame: Record<string, unknown> | undefined;
      try {
        frame = JSON.parse(message);
      } catch {}
      if (frame?.type === "rpc" && typeof frame.id === "string" && typeof frame.method === "string" && Array.isArray(frame.args)) {
        const { id, method, args } = frame as RpcFrame;
        const fn = METHODS[method];
        if (!fn) return ws.send(JSON.stringify({ type: "rpc", id, success: false, error: `Method ${method} does not exist` }));
        return ws.send(JSON.stringify({ type: "rpc", id, success: true, done: true, result: fn(...args) }));
      }
      if (frame?.type === "cf_agent_state" && Object.hasOwn(frame, "state")) {
        this.#setState(frame.state);
        const out = JSON.stringify({ type: "cf_agent_state", state: frame.state });
        for (const other of this.ctx.getWebSockets()) if (other !== ws) other.send(out);
        return;
      }
    }
    const kind = classify(message);
    if (kind === "echo") ws.send(message);
    else if (kind === "broadcast") for (const other of this.ctx.getWebSockets()) other.send(message);
    else if (kind === "instance") ws.send(`i:${this.#instance}`);
  }

  webSocketClose(ws: WebSocket, code: number, reason: string): void {
    reciprocateClose2(ws, code, reason);
  }

  #getState(): unknown {
    if (!this.#loaded) {
      const sql = this.ctx.storage.sql;
      sql.exec("CREATE TABLE IF NOT EXISTS raw_state (id TEXT PRIMARY KEY, value TEXT)");
      const row = sql.exec("SELECT value FROM raw_state WHERE id = 'state'").toArray()[0];
      this.#state = row ? JSON.parse(row.value as string) : INITIAL_STATE;
      if (!row) sql.exec("INSERT INTO raw_state (id, value) VALUES ('state', ?)", JSON.stringify(INITIAL_STATE));
      this.#loaded = true;
    }
    return this.#state;
  }

  #setState(value: unknown): void {
    this.#getState();
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO raw_state (id, value) VALUES ('state', ?)", JSON.stringify(value));
    this.#state = value;
  }
}

/** Answers a client's close with the same code (codes that may not be sent, with none). */
function reciprocateClose2(ws: WebSocket, code: number, reason: string): void {
  try {
    if (code === 1005 || code === 1006 || code === 1015) ws.close();
    else ws.close(code, reason);
  } catch {}
}
