// JSON-RPC error answers and the structural check McpHandler runs on every
// POST body before either protocol lane sees it. The SDK answers a body that
// is JSON but not JSON-RPC with -32700; the JSON-RPC spec says -32600, so the
// body is checked here and handed on pre-parsed.

/** JSON-RPC error codes dokit answers itself. */
const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** The MCP transport's generic server error (bad headers, forbidden, too large). */
export const SERVER_ERROR = -32000;
/** The MCP transport's "Session not found". */
export const SESSION_NOT_FOUND = -32001;

/** The SDK's own batch limit; a longer batch is refused before dispatch. */
const MAX_BATCH = 100;

/**
 * @returns a JSON-RPC error response (`id: null` unless given); never carries a stack
 */
export function jsonRpcError(status: number, code: number, message: string, id: string | number | null = null): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id }, { status });
}

/** One JSON-RPC message (request, notification or response) as it arrives. */
export type RawMessage = Record<string, unknown> & { jsonrpc: "2.0" };

/** The outcome of {@link checkBody}. */
export type BodyCheck =
  | { ok: true; body: RawMessage | RawMessage[]; messages: RawMessage[] }
  | { ok: false; response: Response };

function isId(value: unknown): value is string | number {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/** @returns whether `value` has the shape of a JSON-RPC 2.0 request, notification or response */
function isJsonRpcMessage(value: unknown): value is RawMessage {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== "2.0") return false;
  if (typeof message.method === "string") {
    // request (with id) or notification (without); params, when present, is structured
    if ("id" in message && !isId(message.id)) return false;
    return message.params === undefined || (typeof message.params === "object" && message.params !== null);
  }
  // response: an id (null only for errors) and exactly one of result / error
  const hasResult = "result" in message;
  const hasError = "error" in message;
  if (hasResult === hasError) return false;
  if (hasError) return isId(message.id) || message.id === null;
  return isId(message.id);
}

/** @returns whether `message` is a request (has a method and an id) */
export function isRequest(message: RawMessage): boolean {
  return typeof message.method === "string" && "id" in message;
}

/**
 * Parses a POST body and checks its JSON-RPC shape.
 * @param text - the body, already read under the size limit
 * @returns the parsed body, or the error response: -32700 for bad JSON, -32600 for a non-JSON-RPC value
 */
export function checkBody(text: string): BodyCheck {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, response: jsonRpcError(400, PARSE_ERROR, "Parse error: the body is not valid JSON") };
  }
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  if (messages.length === 0 || messages.length > MAX_BATCH) {
    return { ok: false, response: jsonRpcError(400, INVALID_REQUEST, `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages`) };
  }
  for (const message of messages) {
    if (!isJsonRpcMessage(message)) {
      const id = message !== null && typeof message === "object" && isId((message as { id?: unknown }).id)
        ? (message as { id: string | number }).id
        : null;
      return { ok: false, response: jsonRpcError(400, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", id) };
    }
  }
  // SAFETY: every element passed isJsonRpcMessage above.
  return { ok: true, body: body as RawMessage | RawMessage[], messages: messages as RawMessage[] };
}

/**
 * Reads a request body as text, up to `limit` bytes.
 * @returns the text, or `undefined` when the body is larger than `limit`
 */
export async function readBody(request: Request, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
