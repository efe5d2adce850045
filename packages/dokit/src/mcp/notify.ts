import type { Server, ServerEvent, ServerEventBus } from "@modelcontextprotocol/server";
import type { LegacySession } from "./sessions";

// The object's change notifications, delivered on both lanes: modern clients
// receive them on their open `subscriptions/listen` streams (the SDK's listen
// router filters and stamps them); 2025-era sessions in memory receive them
// on their standalone GET stream (stored for `Last-Event-ID` when no stream
// is open). `resources/updated` goes only to sessions that subscribed.

/** Publishes change notifications to every MCP client of the object. */
export class McpNotifier {
  readonly #bus: ServerEventBus;
  readonly #sessions: () => Iterable<LegacySession>;
  readonly #report: (error: Error) => void;

  /** @internal */
  constructor(bus: ServerEventBus, sessions: () => Iterable<LegacySession>, report: (error: Error) => void) {
    this.#bus = bus;
    this.#sessions = sessions;
    this.#report = report;
  }

  /** Sends `notifications/tools/list_changed`. */
  toolsChanged(): Promise<void> {
    return this.#publish({ kind: "tools_list_changed" }, (server) => server.sendToolListChanged());
  }

  /** Sends `notifications/prompts/list_changed`. */
  promptsChanged(): Promise<void> {
    return this.#publish({ kind: "prompts_list_changed" }, (server) => server.sendPromptListChanged());
  }

  /** Sends `notifications/resources/list_changed`. */
  resourcesChanged(): Promise<void> {
    return this.#publish({ kind: "resources_list_changed" }, (server) => server.sendResourceListChanged());
  }

  /**
   * Sends `notifications/resources/updated` for `uri` to the clients that subscribed to it.
   * @param uri - the resource that changed
   */
  resourceUpdated(uri: string): Promise<void> {
    return this.#publish(
      { kind: "resource_updated", uri },
      (server) => server.sendResourceUpdated({ uri }),
      (session) => session.subscriptions.has(uri),
    );
  }

  async #publish(
    event: ServerEvent,
    send: (server: Server) => Promise<void>,
    wants: (session: LegacySession) => boolean = () => true,
  ): Promise<void> {
    this.#bus.publish(event);
    const sends: Promise<void>[] = [];
    for (const session of this.#sessions()) {
      if (session.restoring || !wants(session)) continue;
      // A server without the matching capability refuses the notification: nothing to send.
      sends.push(send(session.lowLevel).catch((error: unknown) => this.#report(error instanceof Error ? error : new Error(String(error)))));
    }
    await Promise.all(sends);
  }
}
