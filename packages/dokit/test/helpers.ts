// Small helpers every test project shares: the workerd projects under test/, the
// Node-side projects (test-node/ re-exports them from its helpers.ts, test-conformance/
// imports them here) and the MCP scenario objects. Plain functions, no vitest import,
// so the Workers and Node both load them.

let serial = 0;

/**
 * A name no other test of this run uses, for an object or a session.
 * @param label - what the test calls it, kept at the front so a failure names it
 * @returns `<label>-<milliseconds>-<serial>`
 */
export const fresh = (label: string): string => `${label}-${Date.now()}-${serial++}`;

/** @returns a promise that settles after `ms` milliseconds */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every 10 ms until it holds.
 * @param what - what is awaited, for the timeout's message
 * @returns once `check()` is true; rejects with "timed out waiting for <what>" after `timeoutMs`
 */
export async function until(check: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * The text an MCP tool result carries: its text blocks joined with newlines (the tools of the
 * test objects answer with one).
 * @returns the text; throws naming the result when it holds no text block
 */
export function textOf(result: unknown): string {
  // SAFETY: a tool result's `content` is a list of blocks; text blocks carry a string `text`.
  const blocks = (result as { content?: { text?: unknown }[] }).content ?? [];
  const texts = blocks.flatMap((block) => (typeof block.text === "string" ? [block.text] : []));
  if (texts.length === 0) throw new Error(`no text block in the tool result ${JSON.stringify(result)}`);
  return texts.join("\n");
}
