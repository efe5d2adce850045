// A scripted model: a fixed reply to any prompt, yielded token by token with a pause before each, as a
// language model streams. It needs no network and no key, and it is deterministic, so a reply that is
// cut short can be continued from any token (`from`) and the tests know the exact text to expect.

/** The tokens of the reply to `prompt`: words, each with the space after it. */
export function replyTokens(prompt: string): string[] {
  const question = prompt.trim().slice(0, 80);
  const text =
    `You asked: "${question}". This reply is written one token at a time into a durable stream, ` +
    "and every token is stored before any page sees it. Reload the page now and it picks up from the " +
    "token it had; crash the object and the turn resumes from the stream's own cursor, so no token is " +
    "lost and none comes twice. When the reply ends it becomes one message of the conversation, and " +
    "the stream is deleted in the same transaction.";
  return text.split(/(?<= )/);
}

/** The whole reply to `prompt`. */
export const replyText = (prompt: string): string => replyTokens(prompt).join("");

/**
 * Streams the reply to `prompt` from token `from` on, one token every `everyMs` milliseconds.
 * Stops, throwing the signal's reason, when `signal` aborts.
 */
export async function* generate(prompt: string, options: { from: number; everyMs: number; signal?: AbortSignal }): AsyncGenerator<string> {
  const tokens = replyTokens(prompt);
  for (let n = options.from; n < tokens.length; n++) {
    await new Promise((resolve) => setTimeout(resolve, options.everyMs));
    options.signal?.throwIfAborted();
    yield tokens[n] as string;
  }
}
