// The conformance scenarios' essentials on the 2026-07-28 lane, which the
// suite's 2025-era client does not reach: the official SDK v2 client, pinned
// to 2026-07-28, over real loopback sockets against the same worker.
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, inject, it } from "vitest";
import { fresh, textOf } from "../test/helpers";
import { SseReader } from "../test/sse-reader";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
const open: Client[] = [];

/** First frames of every SSE response the client received. */
const firstFrames: { method: string; frame: unknown }[] = [];

/** Records the first SSE frame of each response, then hands the response on unchanged. */
async function recordingFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  if (response.headers.get("content-type")?.startsWith("text/event-stream") && response.body) {
    const [mine, theirs] = response.body.tee();
    const reader = new SseReader(new Response(mine));
    void reader
      .next()
      .then((frame) => firstFrames.push({ method: init?.method ?? "GET", frame }))
      .finally(() => reader.cancel());
    return new Response(theirs, response);
  }
  return response;
}

/** Connects the official client, pinned to 2026-07-28, to a fresh object. */
async function connect(handlers: { elicit?: (params: unknown) => unknown; sample?: (params: unknown) => unknown } = {}): Promise<Client> {
  const client = new Client(
    { name: "dokit-modern", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const { elicit, sample } = handlers;
  // SAFETY: the test handlers return well-formed results for their methods.
  if (elicit) client.setRequestHandler("elicitation/create", async (request) => elicit(request.params) as never);
  if (sample) client.setRequestHandler("sampling/createMessage", async (request) => sample(request.params) as never);
  const url = new URL(`agents/everything/${fresh("modern")}/mcp`, inject("conformanceUrl"));
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: recordingFetch }));
  open.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close().catch(() => {})));
});

describe("2026-07-28 lane: tools", () => {
  it("negotiates 2026-07-28 and lists every tool, keeping a JSON Schema 2020-12 input schema as written", async () => {
    const client = await connect();
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of ["test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types"]) {
      expect(names).toContain(name);
    }
    const schema = tools.find((tool) => tool.name === "json_schema_2020_12_tool")?.inputSchema as Record<string, unknown>;
    expect(schema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $defs: { address: { type: "object" } },
      additionalProperties: false,
    });
    const called = await client.callTool({ name: "json_schema_2020_12_tool", arguments: { name: "Ada", address: { city: "London" } } });
    expect(textOf(called)).toBe('JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"London"}}');
    const refused = await client.callTool({ name: "json_schema_2020_12_tool", arguments: { extra: 1 } });
    expect(refused.isError).toBe(true);
  });

  it("returns text, image, audio, embedded resource and mixed content", async () => {
    const client = await connect();
    expect((await client.callTool({ name: "test_simple_text", arguments: {} })).content).toEqual([
      { type: "text", text: "This is a simple text response for testing." },
    ]);
    expect((await client.callTool({ name: "test_image_content", arguments: {} })).content).toEqual([{ type: "image", data: PNG, mimeType: "image/png" }]);
    expect((await client.callTool({ name: "test_audio_content", arguments: {} })).content).toEqual([{ type: "audio", data: WAV, mimeType: "audio/wav" }]);
    expect((await client.callTool({ name: "test_embedded_resource", arguments: {} })).content).toEqual([
      { type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } },
    ]);
    const mixed = await client.callTool({ name: "test_multiple_content_types", arguments: {} });
    expect((mixed.content as { type: string }[]).map((block) => block.type)).toEqual(["text", "image", "resource"]);
  });

  it("turns a throwing tool into an error result with its message", async () => {
    const client = await connect();
    const result = await client.callTool({ name: "test_error_handling", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("This tool intentionally returns an error for testing");
  });

  it("streams progress notifications in order, on an SSE response that starts with the retry field", async () => {
    const client = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: "test_tool_with_progress", arguments: {} },
      { onprogress: (update) => void progress.push(update.progress) },
    );
    expect(progress).toEqual([0, 50, 100]);
    expect(textOf(result)).toBeTruthy();
    expect(firstFrames.some(({ method, frame }) => method === "POST" && JSON.stringify(frame) === '{"retry":"1000"}')).toBe(true);
  });

  it("delivers log messages at the level the request's envelope sets", async () => {
    const client = await connect();
    const logs: unknown[] = [];
    client.setNotificationHandler("notifications/message", (notification) => void logs.push(notification.params.data));
    await client.callTool({ name: "test_tool_with_logging", arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: "debug" } });
    expect(logs).toEqual(["Tool execution started", "Tool processing data", "Tool execution completed"]);
    logs.length = 0;
    await client.callTool({ name: "test_tool_with_logging", arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: "error" } });
    expect(logs).toEqual([]);
  });
});

describe("2026-07-28 lane: sampling and elicitation (input_required round trips)", () => {
  it("asks the client's LLM and uses its answer", async () => {
    const asked: unknown[] = [];
    const client = await connect({
      sample: (params) => {
        asked.push(params);
        return { role: "assistant", content: { type: "text", text: "forty-two" }, model: "test-model", stopReason: "endTurn" };
      },
    });
    const result = await client.callTool({ name: "test_sampling", arguments: { prompt: "The answer?" } });
    expect(textOf(result)).toBe("LLM response: forty-two");
    expect(asked).toMatchObject([{ messages: [{ role: "user", content: { type: "text", text: "The answer?" } }], maxTokens: 100 }]);
  });

  it("elicits a form, with defaults and every enum variant", async () => {
    const forms: { message: string; requestedSchema: { properties: Record<string, unknown> } }[] = [];
    const client = await connect({
      elicit: (params) => {
        forms.push(params as (typeof forms)[number]);
        return { action: "accept", content: { response: "yes" } };
      },
    });
    const simple = await client.callTool({ name: "test_elicitation", arguments: { message: "Your answer?" } });
    expect(textOf(simple)).toBe('User response: action=accept, content={"response":"yes"}');
    await client.callTool({ name: "test_elicitation_sep1034_defaults", arguments: {} });
    await client.callTool({ name: "test_elicitation_sep1330_enums", arguments: {} });
    expect(forms.map((form) => form.message)).toEqual([
      "Your answer?",
      "Please review and update the form fields with defaults",
      "Please select options from the enum fields",
    ]);
    expect(forms[1]?.requestedSchema.properties).toMatchObject({
      name: { default: "John Doe" },
      age: { type: "integer", default: 30 },
      score: { default: 95.5 },
      status: { enum: ["active", "inactive", "pending"], default: "active" },
      verified: { default: true },
    });
    expect(Object.keys(forms[2]?.requestedSchema.properties ?? {})).toEqual(["untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"]);
  });

  it("reports a declined elicitation", async () => {
    const client = await connect({ elicit: () => ({ action: "decline" }) });
    const result = await client.callTool({ name: "test_elicitation", arguments: { message: "Your answer?" } });
    expect(textOf(result)).toBe("User response: action=decline, content={}");
  });
});

describe("2026-07-28 lane: resources, prompts, completion", () => {
  it("lists and reads text, binary and templated resources", async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual(["test://static-binary", "test://static-text", "test://watched-resource"]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(["test://template/{id}/data"]);
    expect((await client.readResource({ uri: "test://static-text" })).contents).toEqual([
      { uri: "test://static-text", mimeType: "text/plain", text: "This is the content of the static text resource." },
    ]);
    expect((await client.readResource({ uri: "test://static-binary" })).contents).toEqual([{ uri: "test://static-binary", mimeType: "image/png", blob: PNG }]);
    const templated = (await client.readResource({ uri: "test://template/123/data" })).contents[0] as { uri: string; text: string };
    expect(templated.uri).toBe("test://template/123/data");
    expect(JSON.parse(templated.text)).toEqual({ id: "123", templateTest: true, data: "Data for ID: 123" });
  });

  it("lists prompts and gets them with arguments, an embedded resource and an image", async () => {
    const client = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name).sort()).toEqual([
      "test_prompt_with_arguments",
      "test_prompt_with_embedded_resource",
      "test_prompt_with_image",
      "test_simple_prompt",
    ]);
    expect((await client.getPrompt({ name: "test_simple_prompt" })).messages).toEqual([
      { role: "user", content: { type: "text", text: "This is a simple prompt for testing." } },
    ]);
    const withArgs = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } });
    expect(withArgs.messages[0]?.content).toEqual({ type: "text", text: "Prompt with arguments: arg1='a', arg2='b'" });
    const embedded = await client.getPrompt({ name: "test_prompt_with_embedded_resource", arguments: { resourceUri: "test://x" } });
    expect(embedded.messages[0]?.content).toMatchObject({ type: "resource", resource: { uri: "test://x" } });
    const image = await client.getPrompt({ name: "test_prompt_with_image" });
    expect(image.messages[0]?.content).toEqual({ type: "image", data: PNG, mimeType: "image/png" });
  });

  it("completes prompt arguments and resource template variables", async () => {
    const client = await connect();
    const prompt = await client.complete({ ref: { type: "ref/prompt", name: "test_prompt_with_arguments" }, argument: { name: "arg1", value: "par" } });
    expect(prompt.completion.values).toEqual(["paris", "park", "party"]);
    const template = await client.complete({
      ref: { type: "ref/resource", uri: "test://template/{id}/data" },
      argument: { name: "id", value: "4" },
    });
    expect(template.completion.values).toEqual(["456"]);
  });
});

describe("2026-07-28 lane: subscriptions", () => {
  it("delivers resources/updated for a subscribed resource on a subscriptions/listen stream", async () => {
    const client = await connect();
    const updated: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (notification) => void updated.push(notification.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: ["test://watched-resource"] });
    expect(subscription.honoredFilter).toMatchObject({ resourceSubscriptions: ["test://watched-resource"] });
    await client.callTool({ name: "touch_watched", arguments: {} });
    const deadline = Date.now() + 5000;
    while (updated.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(updated).toEqual(["test://watched-resource"]);
    await subscription.close();
  });
});
