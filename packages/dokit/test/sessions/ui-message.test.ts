// The AI SDK's UIMessage (ai@5, its `UIMessage<METADATA, DATA, TOOLS>` and every `UIMessagePart`), as its
// type declarations define it, is a SessionMessage as it is: an app passes its chat messages unconverted.
// The `ai` package is not a dependency of dokit, so its part shapes are restated here.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { SessionMessage } from "../../src/sessions";
import { fresh } from "../helpers";

type ProviderMetadata = Record<string, Record<string, unknown>>;
type UIMessagePart =
  | { type: "text"; text: string; state?: "streaming" | "done"; providerMetadata?: ProviderMetadata }
  | { type: "reasoning"; text: string; state?: "streaming" | "done"; providerMetadata?: ProviderMetadata }
  | { type: "source-url"; sourceId: string; url: string; title?: string; providerMetadata?: ProviderMetadata }
  | { type: "source-document"; sourceId: string; mediaType: string; title: string; filename?: string; providerMetadata?: ProviderMetadata }
  | { type: "file"; mediaType: string; filename?: string; url: string; providerMetadata?: ProviderMetadata }
  | { type: "step-start" }
  | { type: `data-${string}`; id?: string; data: unknown }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: "input-streaming" | "input-available" | "output-available" | "output-error";
      input: unknown;
      output?: unknown;
      errorText?: string;
      providerExecuted?: boolean;
      callProviderMetadata?: ProviderMetadata;
    }
  | { type: "dynamic-tool"; toolName: string; toolCallId: string; state: "input-available" | "output-available"; input: unknown; output?: unknown };
interface UIMessage<METADATA = unknown> {
  id: string;
  role: "system" | "user" | "assistant";
  metadata?: METADATA;
  parts: UIMessagePart[];
}

describe("the AI SDK's UIMessage", () => {
  it("is a SessionMessage, and one with every kind of part reads back as written", async () => {
    expectTypeOf<UIMessage>().toExtend<SessionMessage>();
    expectTypeOf<UIMessage<{ createdAt: number }>>().toExtend<SessionMessage>();
    const message: UIMessage<{ model: string }> = {
      id: "ui-1",
      role: "assistant",
      metadata: { model: "mock" },
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "thinking", state: "done" },
        { type: "text", text: "Here is the weather.", state: "done" },
        { type: "tool-weather", toolCallId: "c1", state: "output-available", input: { city: "Paris" }, output: { c: 21 } },
        { type: "dynamic-tool", toolName: "search", toolCallId: "c2", state: "input-available", input: { q: "x" } },
        { type: "source-url", sourceId: "s1", url: "https://example.com" },
        { type: "data-progress", id: "d1", data: { done: 3 } },
        { type: "file", mediaType: "image/png", filename: "a.png", url: "data:image/png;base64,iVBORw0KGgo=" },
      ],
    };
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(fresh("ui")));
    await runInDurableObject(stub, async ({ session }) => {
      const { message: stored } = await session.appendMessage(message);
      expect(stored).toEqual(message);
      expect(JSON.stringify(await session.getMessage("ui-1"))).toBe(JSON.stringify(message));
    });
  });
});
