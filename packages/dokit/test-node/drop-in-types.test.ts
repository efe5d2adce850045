// Type-level tests: code typed against the official client's WebSocket
// surface compiles against dokit's. Checked by `tsc` (the package's typecheck
// script); at run time expectTypeOf is a no-op.
import type { AgentClient as OfficialClient } from "agents/client";
import { describe, expectTypeOf, it } from "vitest";
import { AgentClient } from "../src/client";
import type { AgentClientMessage, AgentClientProperties } from "../src/client";

/** The members the official client shares with a WebSocket, plus PartySocket's `reconnect` and `id`. */
type WebSocketSurface = Pick<
  OfficialClient,
  | "readyState"
  | "url"
  | "binaryType"
  | "bufferedAmount"
  | "CONNECTING"
  | "OPEN"
  | "CLOSING"
  | "CLOSED"
  | "onopen"
  | "onmessage"
  | "onclose"
  | "onerror"
  | "send"
  | "close"
  | "reconnect"
  | "id"
>;

describe("AgentClient as a drop-in", () => {
  it("has the official client's WebSocket surface", () => {
    expectTypeOf<AgentClient>().toExtend<WebSocketSurface>();
    expectTypeOf(AgentClient.CONNECTING).toEqualTypeOf<number>();
    expectTypeOf(AgentClient.CLOSED).toEqualTypeOf<number>();
    expectTypeOf<AgentClient["send"]>().returns.toEqualTypeOf<boolean>();
    expectTypeOf<Parameters<OfficialClient["send"]>[0]>().toExtend<AgentClientMessage>();
  });

  it("types listeners by event name", () => {
    const client = {} as AgentClient;
    void (() => {
      client.addEventListener("message", (event) => expectTypeOf(event).toEqualTypeOf<MessageEvent>());
      client.addEventListener("close", (event) => expectTypeOf(event.code).toEqualTypeOf<number>());
      client.addEventListener("custom", (event) => expectTypeOf(event).toEqualTypeOf<Event>());
      client.onmessage = (event) => expectTypeOf(event).toEqualTypeOf<MessageEvent>();
    });
  });

  it("takes PartySocket's property names in updateProperties", () => {
    expectTypeOf<{ room: string; party: string; query: { token: string } }>().toExtend<AgentClientProperties>();
    expectTypeOf<{ name: string; agent: string; id: string; host: string }>().toExtend<AgentClientProperties>();
    // @ts-expect-error: callbacks are fixed at construction
    const callback: AgentClientProperties = { onStateUpdate: () => {} };
    void callback;
  });
});
