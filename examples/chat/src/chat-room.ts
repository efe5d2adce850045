import { DurableObject } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { Scheduler } from "dokit/schedule";
import { type Connection, WebSockets } from "dokit/websockets";
import type { ChatEvent, ChatInput, Member } from "./messages";

const MAX_TEXT = 2000;
/** `/remind <minutes> <text>`: at most a day ahead. */
const REMIND = /^\/remind\s+(\d+(?:\.\d+)?)\s+(.+)$/s;
const MAX_REMIND_MINUTES = 24 * 60;
const roomTag = (room: string) => `room:${room}`;

/** `?room=` picks the room (a tag on the connection); `?nickname=` the first name. */
function roomOf(request: Request): string {
  const room = new URL(request.url).searchParams.get("room")?.trim() ?? "";
  return /^[\w-]{1,64}$/.test(room) ? room : "general";
}

function cleanNickname(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const nickname = value.trim().slice(0, 32);
  return nickname.length > 0 ? nickname : undefined;
}

/**
 * One chat server holding many rooms. A room is a connection tag, so sending to
 * a room is `broadcast(message, { tag })`: the platform's tag index finds the
 * sockets, nothing is kept in memory, and the object hibernates between messages.
 */
export class ChatRoom extends DurableObject<Env> {
  readonly webSockets: WebSockets = new WebSockets({
    getConnectionTags: (_connection, ctx) => [roomTag(roomOf(ctx.request))],
    handlers: {
      onConnect: (connection, ctx) => {
        const url = new URL(ctx.request.url);
        const nickname = cleanNickname(url.searchParams.get("nickname")) ?? `guest-${connection.publicId.slice(0, 4)}`;
        connection.setState({ nickname });
        const room = roomOf(ctx.request);
        this.#send(connection, { type: "welcome", room, nickname, members: this.#members(room) });
        this.webSockets.broadcast({ type: "joined", nickname } satisfies ChatEvent, { except: connection, tag: roomTag(room) });
      },
      onMessage: (connection, message) => {
        const input = parse(message);
        const member = connection as Connection<Member>;
        const nickname = member.state?.nickname ?? "?";
        const remind = input?.type === "say" && typeof input.text === "string" ? REMIND.exec(input.text.trim()) : null;
        if (remind) {
          const minutes = Number(remind[1]);
          if (minutes <= 0 || minutes > MAX_REMIND_MINUTES) {
            this.#send(connection, { type: "error", message: `Reminders are 0 to ${MAX_REMIND_MINUTES} minutes ahead` });
            return;
          }
          const text = (remind[2] as string).slice(0, MAX_TEXT);
          // Durable: the reminder survives hibernation, eviction and deploys; it fires on the object's alarm.
          return this.scheduler.set(minutes * 60, "remind", { tag: this.#roomOf(connection) ?? roomTag("general"), nickname, text }).then(() =>
            this.#send(connection, { type: "said", from: "reminders", text: `I will remind the room in ${minutes} min: ${text}`, at: Date.now() }),
          );
        }
        if (input?.type === "say" && typeof input.text === "string" && input.text.trim()) {
          const event: ChatEvent = { type: "said", from: nickname, text: input.text.slice(0, MAX_TEXT), at: Date.now() };
          // The sender shows its own line at once; everyone else in its room gets it here.
          this.webSockets.broadcast(event, { except: connection, tag: this.#roomOf(connection) });
        } else if (input?.type === "nick" && cleanNickname(input.nickname)) {
          const to = cleanNickname(input.nickname) as string;
          member.setState({ nickname: to });
          this.webSockets.broadcast({ type: "renamed", from: nickname, to } satisfies ChatEvent, { tag: this.#roomOf(connection) });
        } else {
          this.#send(connection, { type: "error", message: 'Send {"type":"say","text"} or {"type":"nick","nickname"}' });
        }
      },
      onClose: (connection) => {
        const nickname = (connection as Connection<Member>).state?.nickname;
        if (nickname) this.webSockets.broadcast({ type: "left", nickname } satisfies ChatEvent, { except: connection, tag: this.#roomOf(connection) });
      },
    },
  });
  /** Reminders set with `/remind <minutes> <text>`: sent to the room they were set in. */
  readonly scheduler = new Scheduler({
    callbacks: {
      remind: (reminder: { tag: string; nickname: string; text: string }) => {
        const event: ChatEvent = { type: "said", from: "reminder", text: `@${reminder.nickname}: ${reminder.text}`, at: Date.now() };
        this.webSockets.broadcast(event, { tag: reminder.tag });
      },
    },
  });
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets).use(this.scheduler)
    // The live inspector at /agents/chat-room/{name}/__dokit (localhost only: docs/inspector.md).
    .use(new Inspector({ enabled: true, observability: new Observability(), webSockets: this.webSockets, scheduler: this.scheduler }));

  /**
   * DO RPC: who is in a room, read from the connections' attachments.
   * @returns nicknames in the order the platform lists the sockets
   */
  async members(room = "general"): Promise<string[]> {
    await this.lifecycle.start();
    return this.#members(room);
  }

  #members(room: string): string[] {
    return [...this.webSockets.getConnections(roomTag(room))].map((c) => (c as Connection<Member>).state?.nickname ?? "?");
  }

  #roomOf(connection: Connection): string | undefined {
    // tags[0] is the connection id, which the client chooses (`_pk=room:…`): the room is among the tags after it.
    return connection.tags.find((tag, index) => index > 0 && tag.startsWith("room:"));
  }

  #send(connection: Connection, event: ChatEvent): void {
    connection.send(JSON.stringify(event));
  }
}

function parse(message: string | ArrayBuffer): Partial<ChatInput> | undefined {
  if (typeof message !== "string") return undefined;
  try {
    const value: unknown = JSON.parse(message);
    return value !== null && typeof value === "object" ? (value as Partial<ChatInput>) : undefined;
  } catch {
    return undefined;
  }
}
