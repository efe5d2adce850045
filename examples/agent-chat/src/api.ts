// What the page and the object share: how a turn's reply is named, and what its stream holds.

/** One chunk of a reply's stream: the next token of the reply's text. */
export type Token = string;

/** A turn as the page sends it and the task stores it: the user's message id and text, and the model's pace. */
export type Turn = { id: string; text: string; everyMs: number };

/** The stream that holds the tokens of the reply to the user message `id`, while it is written. */
export const streamIdOf = (id: string): string => `reply:${id}`;

/** The id of the assistant message that answers the user message `id`. */
export const replyIdOf = (id: string): string => `${id}:reply`;

/** The text of a message: its text parts, joined (a message from the wire has parts of any shape). */
export const textOf = (message: { parts: readonly unknown[] }): string =>
  message.parts.map((part) => (isTextPart(part) ? part.text : "")).join("");

const isTextPart = (part: unknown): part is { type: "text"; text: string } =>
  typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text" && typeof (part as { text?: unknown }).text === "string";
