// The AI SDK's UIMessage, from the `ai` package itself (a devDependency for this test only), is a
// SessionMessage as it is: an app passes its chat messages to Sessions unconverted and reads them back
// as written. The types are the package's own, so a change to the SDK's part shapes fails typecheck here.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { readUIMessageStream, simulateReadableStream, streamText, tool, validateUIMessages, type UIDataTypes, type UIMessage, type UIMessagePart, type UITools } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { SessionMessage, SessionMessagePart } from "../../src/sessions";
import { fresh } from "../helpers";

type Metadata = { model: string; createdAt: number };
type Data = { progress: { done: number; of: number } };
type Tools = { weather: { input: { city: string }; output: { celsius: number } } };
type ChatMessage = UIMessage<Metadata, Data, Tools>;

// A 1×1 PNG as a data: url: a file part Sessions stores apart, by content hash, and puts back on read.
const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const schemas = {
  metadataSchema: z.object({ model: z.string(), createdAt: z.number() }),
  dataSchemas: { progress: z.object({ done: z.number(), of: z.number() }) },
  tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), outputSchema: z.object({ celsius: z.number() }) }) },
};

describe("the AI SDK's UIMessage (the ai package's own type)", () => {
  it("is a SessionMessage, its parts SessionMessageParts, with any metadata, data parts and tools", () => {
    expectTypeOf<UIMessage>().toExtend<SessionMessage>();
    expectTypeOf<ChatMessage>().toExtend<SessionMessage>();
    expectTypeOf<UIMessagePart<UIDataTypes, UITools>>().toExtend<SessionMessagePart>();
    expectTypeOf<UIMessagePart<Data, Tools>>().toExtend<SessionMessagePart>();
  });

  it("with text, reasoning, tool, file and data parts is appended without a cast and reads back deep-equal", async () => {
    const message: ChatMessage = {
      id: "ui-1",
      role: "assistant",
      metadata: { model: "mock", createdAt: 1_700_000_000_000 },
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "The user asked about Paris.", state: "done" },
        { type: "tool-weather", toolCallId: "call-1", state: "output-available", input: { city: "Paris" }, output: { celsius: 21 } },
        { type: "dynamic-tool", toolName: "search", toolCallId: "call-2", state: "input-available", input: { q: "Paris weather" } },
        { type: "text", text: "It is 21 °C in Paris. 晴れ ☀️", state: "done" },
        { type: "source-url", sourceId: "s1", url: "https://example.com/paris" },
        { type: "file", mediaType: "image/png", filename: "map.png", url: PNG },
        { type: "data-progress", id: "d1", data: { done: 3, of: 3 } },
      ],
    };
    const user: ChatMessage = { id: "ui-0", role: "user", metadata: { model: "mock", createdAt: 1_699_999_999_000 }, parts: [{ type: "text", text: "Weather in Paris?" }] };
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(fresh("ui")));
    await runInDurableObject(stub, async ({ session }, ctx) => {
      await session.appendMessage(user);
      const { inserted, message: stored } = await session.appendMessage(message);
      expect(inserted).toBe(true);
      expect(stored).toEqual(message);
      // The image was stored apart: the row holds its pointer, not its payload.
      const row = ctx.storage.sql.exec<{ content: string }>("SELECT content FROM dokit_session_messages WHERE id = 'ui-1'").one();
      expect(row.content).not.toContain(PNG);
      expect(row.content).toContain("attachment:sha256:");
    });
    await runInDurableObject(stub, async ({ session }) => {
      const read = await session.getMessage("ui-1");
      expect(read).toEqual(message);
      expect(JSON.stringify(read)).toBe(JSON.stringify(message));
      const history = await session.getHistory();
      expect(history).toEqual([user, message]);
      // The SDK itself accepts what Sessions returns, against the message's own schemas.
      const validated = await validateUIMessages<ChatMessage>({ messages: history, ...schemas });
      expect(validated).toEqual([user, message]);
    });
  });

  it("built by the SDK from a streamed reply (its mock model, no network) reads back deep-equal", async () => {
    const model = new MockLanguageModelV4({
      doStream: {
        stream: simulateReadableStream({
          chunks: [
            { type: "stream-start", warnings: [] },
            { type: "reasoning-start", id: "r1" },
            { type: "reasoning-delta", id: "r1", delta: "Look it up." },
            { type: "reasoning-end", id: "r1" },
            { type: "tool-call", toolCallId: "call-1", toolName: "weather", input: JSON.stringify({ city: "Paris" }) },
            { type: "text-start", id: "t1" },
            { type: "text-delta", id: "t1", delta: "It is " },
            { type: "text-delta", id: "t1", delta: "21 °C." },
            { type: "text-end", id: "t1" },
            {
              type: "finish",
              finishReason: { unified: "stop", raw: "stop" },
              usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 9, text: 6, reasoning: 3 } },
            },
          ],
        }),
      },
    });
    const result = streamText({
      model,
      prompt: "Weather in Paris?",
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => ({ celsius: 21 }) }) },
    });
    let built: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream: result.toUIMessageStream({ generateMessageId: () => "reply-1" }) })) built = message;
    if (!built) throw new Error("the SDK built no message");
    const kinds = built.parts.map((part) => part.type);
    expect(kinds).toEqual(expect.arrayContaining(["reasoning", "tool-weather", "text"]));
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(fresh("ui-sdk")));
    const reply = built;
    await runInDurableObject(stub, async ({ session }) => {
      await session.appendMessage(reply);
    });
    await runInDurableObject(stub, async ({ session }) => {
      expect(JSON.stringify(await session.getMessage(reply.id))).toBe(JSON.stringify(reply));
      expect(await session.getMessage(reply.id)).toEqual(reply);
    });
  });
});
