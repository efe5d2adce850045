// Helpers the examples' tests share (each example's test/ imports them from here, as its
// vitest config takes ../build-pages.ts).

let serial = 0;

/**
 * A name no other test of this run uses, for an object.
 * @param label - what the test calls it, kept at the front so a failure names it
 * @returns `<label>-<milliseconds>-<serial>`
 */
export const fresh = (label: string): string => `${label}-${Date.now()}-${serial++}`;

/**
 * The text an MCP tool result carries: its text blocks joined with newlines.
 * @returns the text; throws naming the result when it holds no text block
 */
export function textOf(result: unknown): string {
  // SAFETY: a tool result's `content` is a list of blocks; text blocks carry a string `text`.
  const blocks = (result as { content?: { text?: unknown }[] }).content ?? [];
  const texts = blocks.flatMap((block) => (typeof block.text === "string" ? [block.text] : []));
  if (texts.length === 0) throw new Error(`no text block in the tool result ${JSON.stringify(result)}`);
  return texts.join("\n");
}
