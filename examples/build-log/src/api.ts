// What the page and the object share: the shape of one log line (a build's stream chunk).

/** One line of a build's log. */
export type LogLine = { step: string; text: string };
