// SHA-256 from @noble/hashes because the hash is taken synchronously, inside a write that may run
// in the caller's synchronous SQLite transaction: crypto.subtle.digest is async, and node:crypto
// would make dokit/sessions need nodejs_compat (docs/sessions.md, "Dependencies").
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { DokitError } from "../lifecycle/errors";
import type { SessionsErrorCode } from "./errors";
import type { SessionMessage, SessionMessagePart } from "./types";

// What a message becomes on its way into a row: sanitized, reserved metadata removed for client
// input, inline media replaced by pointers. Each step keeps the message's key order, so a read
// serializes to the same JSON as the message written.

/** The url a stored media part carries in its row instead of its payload. */
export const MEDIA_POINTER = "attachment:sha256:";
const encoder = new TextEncoder();

/** A media payload taken out of a message: its hash and its bytes (the `data:` url as UTF-8). */
export interface Media {
  hash: string;
  bytes: Uint8Array;
}

/** A message ready for its rows. */
export interface Prepared {
  /** The message as stored and read back (payloads inline). */
  message: SessionMessage;
  /** Its row JSON (payloads replaced by pointers). */
  json: string;
  /** The payloads it points at, each once. */
  media: Media[];
  /** JSON bytes plus payload bytes: what reading it takes. */
  bytes: number;
  /** The stamped token estimate. */
  tokens: number;
}

/** @throws DokitError INVALID_MESSAGE unless `message` has a string id and role and a parts array */
export function checkMessage(message: unknown): asserts message is SessionMessage {
  const candidate = message as Partial<SessionMessage> | null;
  if (
    typeof candidate !== "object" ||
    candidate === null ||
    typeof candidate.id !== "string" ||
    candidate.id === "" ||
    typeof candidate.role !== "string" ||
    !Array.isArray(candidate.parts)
  ) {
    throw new DokitError<SessionsErrorCode>("INVALID_MESSAGE", "a session message needs a non-empty string id, a string role and a parts array");
  }
}

/**
 * Removes what must not be replayed to a provider: OpenAI's `itemId` and `reasoningEncryptedContent`
 * in a part's provider metadata, and reasoning parts with neither text nor metadata.
 */
export function sanitize(message: SessionMessage): SessionMessage {
  let changed = false;
  const parts: SessionMessagePart[] = [];
  for (const part of message.parts) {
    let next = part as SessionMessagePart & Record<string, unknown>;
    for (const key of ["providerMetadata", "callProviderMetadata"]) {
      const stripped = stripOpenAi(next, key);
      if (stripped !== next) {
        next = stripped;
        changed = true;
      }
    }
    if (next.type === "reasoning" && (typeof next.text !== "string" || next.text.trim() === "")) {
      const metadata = next.providerMetadata;
      if (!(metadata && typeof metadata === "object" && Object.keys(metadata).length > 0)) {
        changed = true;
        continue;
      }
    }
    parts.push(next);
  }
  return changed ? { ...message, parts } : message;
}

function stripOpenAi(part: SessionMessagePart & Record<string, unknown>, key: string): SessionMessagePart & Record<string, unknown> {
  const metadata = part[key] as Record<string, unknown> | undefined;
  const openai = metadata && typeof metadata === "object" ? (metadata.openai as Record<string, unknown> | undefined) : undefined;
  if (!openai || typeof openai !== "object" || !("itemId" in openai || "reasoningEncryptedContent" in openai)) return part;
  const { itemId: _item, reasoningEncryptedContent: _encrypted, ...keptOpenai } = openai;
  const { openai: _openai, ...otherProviders } = metadata as Record<string, unknown>;
  const kept = Object.keys(keptOpenai).length > 0 ? { ...otherProviders, openai: keptOpenai } : otherProviders;
  const copy: SessionMessagePart & Record<string, unknown> = { ...part };
  if (Object.keys(kept).length > 0) copy[key] = kept;
  else delete copy[key];
  return copy;
}

/** @returns the message without the reserved metadata keys (the same object when it has none) */
export function stripReserved(message: SessionMessage, reserved: ReadonlySet<string>): SessionMessage {
  const metadata = message.metadata;
  if (reserved.size === 0 || !metadata || typeof metadata !== "object" || Array.isArray(metadata)) return message;
  let kept: Record<string, unknown> | undefined;
  for (const key of Object.keys(metadata)) {
    if (!reserved.has(key)) continue;
    kept ??= { ...(metadata as Record<string, unknown>) };
    delete kept[key];
  }
  return kept ? { ...message, metadata: kept } : message;
}

/** Whether a part carries a payload stored apart: a non-text media type with a `data:` url. */
function isMedia(part: SessionMessagePart): part is SessionMessagePart & { url: string; mediaType: string } {
  return typeof part.url === "string" && part.url.startsWith("data:") && typeof part.mediaType === "string" && !part.mediaType.startsWith("text/");
}

/**
 * Builds a message's row form.
 * @throws TypeError when the message is not JSON-serializable (from JSON.stringify)
 */
export function prepare(message: SessionMessage): Prepared {
  const media = new Map<string, Media>();
  let parts: SessionMessagePart[] | undefined;
  let mediaBytes = 0;
  message.parts.forEach((part, index) => {
    if (!isMedia(part)) return;
    const bytes = encoder.encode(part.url);
    const hash = bytesToHex(sha256(bytes));
    if (!media.has(hash)) media.set(hash, { hash, bytes });
    mediaBytes += bytes.byteLength;
    parts ??= message.parts.slice();
    parts[index] = { ...part, url: `${MEDIA_POINTER}${hash}` };
  });
  const row = parts ? { ...message, parts } : message;
  const json = JSON.stringify(row);
  if (typeof json !== "string") {
    throw new DokitError<SessionsErrorCode>("INVALID_MESSAGE", "a session message must serialize to a JSON object");
  }
  return { message, json, media: [...media.values()], bytes: utf8Length(json) + mediaBytes, tokens: estimateTokens(message) };
}

/** @returns the UTF-8 length of `text` without encoding it */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) bytes += 1;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      // A surrogate pair: 2 units, 4 bytes.
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        bytes += 2;
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

/** A payload counted as this many tokens, so media never weighs nothing. */
const MEDIA_TOKENS = 1_000;

/** A heuristic token count: about 4 characters a token over the text a model reads, and a weight per media part. */
export function estimateTokens(message: SessionMessage): number {
  let chars = 0;
  let media = 0;
  for (const part of message.parts) {
    if (typeof part.text === "string") chars += part.text.length;
    if (typeof part.reasoning === "string") chars += part.reasoning.length;
    for (const value of [part.input, part.output, part.result]) {
      if (value !== undefined) chars += typeof value === "string" ? value.length : (JSON.stringify(value)?.length ?? 0);
    }
    if (isMedia(part)) media++;
  }
  return Math.ceil(chars / 4) + media * MEDIA_TOKENS + 4;
}

/** The text a search finds a message by: its text parts, joined by a space. */
export function searchText(message: SessionMessage): string {
  const texts: string[] = [];
  for (const part of message.parts) if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
  return texts.join(" ");
}

/**
 * Turns a row's JSON back into the message: pointers to the payloads it holds replaced by them, and
 * `createdAt` a Date again (it serializes to the same string).
 */
export function restore(json: string, payload: (hash: string) => string | undefined, hashes: readonly string[]): SessionMessage {
  const message = JSON.parse(json) as SessionMessage;
  if (typeof message.createdAt === "string") message.createdAt = new Date(message.createdAt);
  if (hashes.length > 0) {
    const owned = new Set(hashes);
    for (const part of message.parts) {
      if (typeof part.url !== "string" || !part.url.startsWith(MEDIA_POINTER)) continue;
      const hash = part.url.slice(MEDIA_POINTER.length);
      if (!owned.has(hash)) continue;
      const url = payload(hash);
      if (url !== undefined) part.url = url;
    }
  }
  return message;
}
