import { DurableObject, RpcTarget } from "cloudflare:workers";
import { Callables } from "dokit/callables";
import { Inspector } from "dokit/inspector";
import { getCurrentAgent, Lifecycle, Refusal } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { Presence } from "dokit/presence";
import { State } from "dokit/state";
import { coalesceBroadcasts, WebSockets } from "dokit/websockets";
import type { BoardApi, Card, Column, PromotedMessage, TypingMessage, Viewer } from "./api";
import { BoardSchema, CardId, CardText, ColumnSchema, ViewerSchema } from "./schema";

/**
 * The board's client interface. Readonly only refuses a connection's state
 * frames; callables are the application's own actions, so each one that
 * writes checks the caller itself.
 */
export class BoardCallables extends RpcTarget implements BoardApi {
  readonly #board: Board;

  constructor(board: Board) {
    super();
    this.#board = board;
  }

  async addCard(text: string, column: Column): Promise<Card> {
    this.#mustEdit();
    const card: Card = { id: crypto.randomUUID().slice(0, 8), text, column };
    const { cards } = this.#board.cards.get();
    this.#board.cards.set({ cards: [...cards, card] });
    return card;
  }

  async moveCard(id: string, column: Column): Promise<boolean> {
    this.#mustEdit();
    const { cards } = this.#board.cards.get();
    if (!cards.some((card) => card.id === id)) return false;
    this.#board.cards.set({ cards: cards.map((card) => (card.id === id ? { ...card, column } : card)) });
    return true;
  }

  async removeCard(id: string): Promise<boolean> {
    this.#mustEdit();
    const { cards } = this.#board.cards.get();
    const rest = cards.filter((card) => card.id !== id);
    if (rest.length === cards.length) return false;
    this.#board.cards.set({ cards: rest });
    return true;
  }

  async typing(): Promise<void> {
    const connection = this.#mustEdit();
    if (!connection) return;
    const name = this.#board.presence.get(connection)?.name ?? "Someone";
    // A keystroke each: coalesced per editor, so the others get at most one a tick.
    this.#board.webSockets.broadcast({ type: "typing", id: connection.publicId, name } satisfies TypingMessage, {
      coalesce: `typing:${connection.id}`,
      except: connection,
    });
  }

  #mustEdit() {
    const { connection } = getCurrentAgent();
    if (connection && this.#board.webSockets.isReadonly(connection)) throw new Refusal("This board is view-only for you");
    return connection;
  }
}

const param = (request: Request, key: string) => new URL(request.url).searchParams.get(key);

/** A kanban board: one synced, validated value, changed through callables. */
export class Board extends DurableObject<Env> {
  readonly cards = new State({
    initialState: { cards: [] },
    validate: BoardSchema,
  });
  // The long form of `callables`, because it carries argument schemas: each
  // argument is parsed before the method runs, and a bad one never reaches it.
  readonly callables = new Callables(new BoardCallables(this), {
    args: {
      addCard: { text: CardText, column: ColumnSchema },
      moveCard: { id: CardId, column: ColumnSchema },
      removeCard: { id: CardId },
      typing: {},
    },
  });
  // Who is here: each page's name, colour and pointer, checked with the schema and sent to the
  // others at most once per 50 ms tick. View-only pages are present too.
  readonly presence = new Presence<Viewer>({ maxBytes: 256, validate: ViewerSchema });
  readonly webSockets: WebSockets = new WebSockets({
    state: this.cards,
    callables: this.callables,
    presence: this.presence,
    coalescing: coalesceBroadcasts(),
    // `?mode=view` asks for a view-only connection. The Worker authenticates
    // before routing; a query parameter alone never grants more rights.
    readonly: (_connection, ctx) => param(ctx.request, "mode") === "view",
  });
  readonly lifecycle = Lifecycle.install(this).use(this.cards).use(this.webSockets)
    // The live inspector at /agents/board/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, state: this.cards, presence: this.presence }));

  /**
   * DO RPC, called by the Worker after it checked that the user may edit:
   * makes a view-only connection an editor. Survives hibernation (the flag is in the socket's attachment).
   * @returns whether the connection was found and is now writable
   */
  async promote(connectionId: string): Promise<boolean> {
    await this.lifecycle.start();
    const connection = this.webSockets.getConnection(connectionId);
    if (!connection) return false;
    this.webSockets.setReadonly(connection, false);
    connection.send(JSON.stringify({ type: "promoted" } satisfies PromotedMessage));
    return this.webSockets.isReadonly(connection) === false;
  }
}
