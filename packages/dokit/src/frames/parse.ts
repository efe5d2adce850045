// Reading a text message that should hold a JSON object (a frame, an inspector
// feed action, a test's frame) without throwing on anything else.

/** @returns `text` parsed when it is a JSON object (not null, not an array), else `undefined` */
export function parseObject(text: string): Record<string, unknown> | undefined {
  // Only text that starts with `{` can be an object: skip the parse for anything else.
  if (text.trimStart().charCodeAt(0) !== 123 /* { */) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    // SAFETY: JSON text that starts with `{` and parses is an object.
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
