// The "everything" server the official conformance suite exercises: every
// tool, resource and prompt its server scenarios call, built on the plain SDK
// `McpServer` and served by dokit's McpHandler (see worker.ts). Server-to-client
// requests (sampling, elicitation) are pushed on a 2025-era session and
// returned as `inputRequired(...)` on a 2026-07-28 request.
import {
  type CallToolResult,
  completable,
  type ElicitRequestFormParams,
  fromJsonSchema,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  McpServer,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { sleep } from "../test/helpers";

/** A 1×1 red PNG. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/** A minimal WAV file. */
export const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
/** The resource `notify.resourceUpdated` is called for when the `touch_watched` tool runs. */
export const WATCHED = "test://watched-resource";

/** The raw JSON Schema 2020-12 input schema the suite expects to see unchanged in `tools/list`. */
const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
  },
  properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
  additionalProperties: false,
} as const;

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/** What the server needs from the object serving it. */
export interface EverythingHost {
  /** `modern` for a 2026-07-28 request, `legacy` for a 2025-era session. */
  era: "modern" | "legacy";
  /** Tells subscribed clients that a resource changed. */
  resourceUpdated(uri: string): Promise<void>;
}

/** Asks the client to fill in a form: pushed (2025) or as input_required (2026). */
async function elicit(
  host: EverythingHost,
  ctx: ServerContext,
  params: Omit<ElicitRequestFormParams, "mode">,
  answer: (result: { action: string; content?: Record<string, unknown> }) => string,
): Promise<CallToolResult | InputRequiredResult> {
  if (host.era === "legacy") {
    const result = await ctx.mcpReq.elicitInput({ mode: "form", ...params }, { relatedRequestId: ctx.mcpReq.id });
    return text(answer(result));
  }
  const response = inputResponse(ctx.mcpReq.inputResponses, "form");
  if (response.kind !== "elicit") return inputRequired({ inputRequests: { form: inputRequired.elicit(params) } });
  return text(answer(response));
}

/** @returns a fresh server with every feature the conformance scenarios call */
export function buildEverythingServer(host: EverythingHost): McpServer {
  const server = new McpServer(
    { name: "dokit-conformance-server", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  registerTools(server, host);
  registerResources(server);
  registerPrompts(server);
  return server;
}

// ---------------------------------------------------------------- tools

function registerTools(server: McpServer, host: EverythingHost): void {
  server.registerTool("test_simple_text", { description: "Returns simple text" }, () =>
    text("This is a simple text response for testing."),
  );
  server.registerTool("test_image_content", { description: "Returns an image" }, () => ({
    content: [{ type: "image", data: PNG, mimeType: "image/png" }],
  }));
  server.registerTool("test_audio_content", { description: "Returns audio" }, () => ({
    content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }],
  }));
  server.registerTool("test_embedded_resource", { description: "Returns an embedded resource" }, () => ({
    content: [
      {
        type: "resource",
        resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
      },
    ],
  }));
  server.registerTool("test_multiple_content_types", { description: "Returns text, an image and a resource" }, () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: JSON.stringify({ test: "data", value: 123 }) },
      },
    ],
  }));
  server.registerTool("test_tool_with_logging", { description: "Logs three messages while it runs" }, async (ctx) => {
    await ctx.mcpReq.log("info", "Tool execution started");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool processing data");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool execution completed");
    return text("Tool with logging executed successfully");
  });
  server.registerTool("test_tool_with_progress", { description: "Reports progress three times" }, async (ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken ?? 0;
    for (const progress of [0, 50, 100]) {
      await ctx.mcpReq.notify({
        method: "notifications/progress",
        params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
      });
      if (progress < 100) await sleep(50);
    }
    return text(String(progressToken));
  });
  server.registerTool("test_error_handling", { description: "Always fails" }, () => {
    throw new Error("This tool intentionally returns an error for testing");
  });
  server.registerTool("test_reconnection", { description: "Closes its SSE stream mid-call; the result arrives after the client resumes" }, async (ctx) => {
    ctx.http?.closeSSE?.();
    await sleep(100);
    return text("Reconnection test completed successfully.");
  });
  server.registerTool(
    "test_sampling",
    { description: "Asks the client's LLM", inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const params = { messages: [{ role: "user" as const, content: { type: "text" as const, text: prompt } }], maxTokens: 100 };
      let result: unknown;
      if (host.era === "legacy") {
        result = await ctx.mcpReq.requestSampling(params, { relatedRequestId: ctx.mcpReq.id });
      } else {
        const response = inputResponse(ctx.mcpReq.inputResponses, "llm");
        if (response.kind !== "sampling") return inputRequired({ inputRequests: { llm: inputRequired.createMessage(params) } });
        result = response.result;
      }
      // SAFETY: a sampling result carries one content block (or an array of them with tools).
      const content = (result as { content: { type: string; text?: string } | { type: string; text?: string }[] }).content;
      const first = Array.isArray(content) ? content[0] : content;
      return text(`LLM response: ${first?.text ?? "No response"}`);
    },
  );
  server.registerTool(
    "test_elicitation",
    { description: "Asks the user for input", inputSchema: z.object({ message: z.string() }) },
    ({ message }, ctx) =>
      elicit(
        host,
        ctx,
        {
          message,
          requestedSchema: {
            type: "object",
            properties: { response: { type: "string", description: "User's response" } },
            required: ["response"],
          },
        },
        (result) => `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
      ),
  );
  server.registerTool("test_elicitation_sep1034_defaults", { description: "Elicits a form whose fields have defaults" }, (ctx) =>
    elicit(
      host,
      ctx,
      {
        message: "Please review and update the form fields with defaults",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", description: "User name", default: "John Doe" },
            age: { type: "integer", description: "User age", default: 30 },
            score: { type: "number", description: "User score", default: 95.5 },
            status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
            verified: { type: "boolean", description: "Verification status", default: true },
          },
          required: [],
        },
      },
      (result) => `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
    ),
  );
  server.registerTool("test_elicitation_sep1330_enums", { description: "Elicits a form with every enum variant" }, (ctx) =>
    elicit(
      host,
      ctx,
      {
        message: "Please select options from the enum fields",
        requestedSchema: {
          type: "object",
          properties: {
            untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
            titledSingle: {
              type: "string",
              description: "Select one option with titles",
              oneOf: [
                { const: "value1", title: "First Option" },
                { const: "value2", title: "Second Option" },
                { const: "value3", title: "Third Option" },
              ],
            },
            legacyEnum: {
              type: "string",
              description: "Select one option (legacy)",
              enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"],
            },
            untitledMulti: {
              type: "array",
              description: "Select multiple options",
              minItems: 1,
              maxItems: 3,
              items: { type: "string", enum: ["option1", "option2", "option3"] },
            },
            titledMulti: {
              type: "array",
              description: "Select multiple options with titles",
              minItems: 1,
              maxItems: 3,
              items: {
                anyOf: [
                  { const: "value1", title: "First Choice" },
                  { const: "value2", title: "Second Choice" },
                  { const: "value3", title: "Third Choice" },
                ],
              },
            },
          },
          required: [],
        },
      },
      (result) => `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
    ),
  );
  server.registerTool(
    "json_schema_2020_12_tool",
    { description: "Tool with JSON Schema 2020-12 features", inputSchema: fromJsonSchema<Record<string, unknown>>(SCHEMA_2020_12) },
    (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );
  server.registerTool("touch_watched", { description: "Tells subscribers that the watched resource changed" }, async () => {
    await host.resourceUpdated(WATCHED);
    return text("touched");
  });
}

// ---------------------------------------------------------------- resources

function registerResources(server: McpServer): void {
  server.registerResource(
    "static-text",
    "test://static-text",
    { title: "Static Text Resource", description: "A static text resource", mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }] }),
  );
  server.registerResource(
    "static-binary",
    "test://static-binary",
    { title: "Static Binary Resource", description: "A static binary resource (image)", mimeType: "image/png" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }] }),
  );
  server.registerResource(
    "template",
    new ResourceTemplate("test://template/{id}/data", {
      list: undefined,
      complete: { id: (value) => ["123", "456", "789"].filter((id) => id.startsWith(value)) },
    }),
    { title: "Resource Template", description: "A resource template with parameter substitution", mimeType: "application/json" },
    (uri, { id }) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }),
  );
  server.registerResource(
    "watched-resource",
    WATCHED,
    { title: "Watched Resource", description: "A resource clients subscribe to", mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content" }] }),
  );
}

// ---------------------------------------------------------------- prompts

function registerPrompts(server: McpServer): void {
  server.registerPrompt("test_simple_prompt", { title: "Simple Test Prompt", description: "A prompt without arguments" }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
  }));
  server.registerPrompt(
    "test_prompt_with_arguments",
    {
      title: "Prompt With Arguments",
      description: "A prompt with required arguments",
      argsSchema: z.object({
        arg1: completable(z.string().describe("First test argument"), (value) =>
          ["paris", "park", "party", "test"].filter((word) => word.startsWith(value)),
        ),
        arg2: z.string().describe("Second test argument"),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );
  server.registerPrompt(
    "test_prompt_with_embedded_resource",
    {
      title: "Prompt With Embedded Resource",
      description: "A prompt that includes an embedded resource",
      argsSchema: z.object({ resourceUri: z.string().describe("URI of the resource to embed") }),
    },
    ({ resourceUri }) => ({
      messages: [
        { role: "user", content: { type: "resource", resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } } },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );
  server.registerPrompt("test_prompt_with_image", { title: "Prompt With Image", description: "A prompt that includes an image" }, () => ({
    messages: [
      { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }));
}
