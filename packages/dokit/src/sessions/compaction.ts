import { estimateTokens } from "./message";
import type { SessionMessage, StoredCompaction } from "./types";

// Compaction overlays: a stored summary stands, on reads, for a span of a path. The rows under it
// stay; an overlay is planned over a path's ids each time it is read.

/** The id prefix of an overlay as reads show it (`compaction_<id>`). */
export const COMPACTION_PREFIX = "compaction_";

/** @returns whether a message is an overlay a read made (its id starts with `compaction_`) */
export function isCompactionMessage(msg: SessionMessage): boolean {
  return typeof msg.id === "string" && msg.id.startsWith(COMPACTION_PREFIX);
}

/** What a compaction function returns: the span it summarized, and the summary. */
export interface CompactResult {
  /** The first message of the span. */
  fromMessageId: string;
  /** The last message of the span. */
  toMessageId: string;
  /** The text read in its place. */
  summary: string;
}

/** Summarizes a path (overlays applied) into one overlay, or `null` when there is nothing to summarize. */
export type CompactionFunction = (messages: SessionMessage[]) => Promise<CompactResult | null>;

/** Options of {@link createCompactFunction}. */
export interface CompactOptions {
  /** Calls a model with a prompt and returns its text. */
  summarize: (prompt: string) => Promise<string>;
  /** Tokens of the newest messages kept as they are (default 20,000). */
  keepRecentTokens?: number;
}

/** One span of a path an overlay covers: indexes into the path, inclusive. */
export interface Span {
  start: number;
  end: number;
  compaction: StoredCompaction;
}

/**
 * Plans which overlays a path shows: walking root → leaf, an overlay whose first message is here and
 * whose last is at or after it covers that span (the longest, then the newest, when several start
 * here). Overlays starting inside a covered span are not shown.
 */
export function planOverlays(ids: readonly string[], compactions: readonly StoredCompaction[]): Span[] {
  if (compactions.length === 0 || ids.length === 0) return [];
  const at = new Map<string, number>();
  ids.forEach((id, index) => at.set(id, index));
  const startingAt = new Map<number, Span>();
  for (const compaction of compactions) {
    const start = at.get(compaction.fromMessageId);
    const end = at.get(compaction.toMessageId);
    if (start === undefined || end === undefined || end < start) continue;
    const best = startingAt.get(start);
    // Newest last in `compactions`: a tie goes to the newer.
    if (!best || end >= best.end) startingAt.set(start, { start, end, compaction });
  }
  const spans: Span[] = [];
  for (let index = 0; index < ids.length; index++) {
    const span = startingAt.get(index);
    if (!span) continue;
    spans.push(span);
    index = span.end;
  }
  return spans;
}

/** The message an overlay reads as. */
export function overlayMessage(compaction: StoredCompaction): SessionMessage {
  return {
    id: `${COMPACTION_PREFIX}${compaction.id}`,
    role: "assistant",
    parts: [{ type: "text", text: compaction.summary }],
    createdAt: new Date(compaction.createdAt),
  };
}

const HEAD = 3;
const MIN_TAIL = 2;

/**
 * The stock compaction: keeps the first three messages and the newest `keepRecentTokens` (at least two
 * messages) as they are, and asks `summarize` for a summary of what lies between, folding in an earlier
 * overlay's summary when the span holds one. A tool call and its result are never cut apart.
 */
export function createCompactFunction(opts: CompactOptions): CompactionFunction {
  const keepRecentTokens = opts.keepRecentTokens ?? 20_000;
  return async (messages) => {
    if (messages.length <= HEAD + MIN_TAIL) return null;
    let tailStart = messages.length;
    let tokens = 0;
    while (tailStart > HEAD) {
      const next = messages[tailStart - 1] as SessionMessage;
      const cost = estimateTokens(next);
      if (messages.length - tailStart >= MIN_TAIL && tokens + cost > keepRecentTokens) break;
      tokens += cost;
      tailStart--;
    }
    // A tail that opens with a tool result keeps the call before it.
    while (tailStart > HEAD && isToolResult(messages[tailStart] as SessionMessage)) tailStart--;
    const middle = messages.slice(HEAD, tailStart);
    if (middle.length === 0) return null;
    const earlier = middle.filter(isCompactionMessage).map((message) => textOf(message));
    const transcript = middle
      .filter((message) => !isCompactionMessage(message))
      .map((message) => `${message.role}: ${textOf(message)}`)
      .join("\n\n");
    const prompt = [
      "Summarize the conversation below so it can replace those messages in the context of a model continuing it.",
      "Keep facts, decisions, open questions, names, numbers and the state of any task; drop pleasantries.",
      "Use sections: Goal, Progress, Decisions, Open items, Key details.",
      earlier.length > 0 ? `An earlier summary of the conversation before these messages, to update:\n${earlier.join("\n\n")}` : "",
      `Messages:\n${transcript}`,
    ]
      .filter((line) => line !== "")
      .join("\n\n");
    const summary = await opts.summarize(prompt);
    return { fromMessageId: (middle[0] as SessionMessage).id, toMessageId: (middle[middle.length - 1] as SessionMessage).id, summary };
  };
}

function isToolResult(message: SessionMessage): boolean {
  return message.role === "tool";
}

function textOf(message: SessionMessage): string {
  const texts: string[] = [];
  for (const part of message.parts) {
    if (typeof part.text === "string") texts.push(part.text);
    else if (part.type.startsWith("tool-") || part.type === "dynamic-tool") {
      texts.push(`[${part.toolName ?? part.type.slice(5)}] ${JSON.stringify(part.input ?? null)} → ${JSON.stringify(part.output ?? null)}`);
    }
  }
  return texts.join("\n");
}
