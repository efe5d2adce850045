// What the page shares with the object: plain constants and types, no platform imports.

/** The name of the shared text (`doc.getText(TEXT)`) the page binds CodeMirror to. */
export const TEXT = "codemirror";

/** What each open page publishes as its awareness `user` field: y-codemirror.next draws remote cursors with it. */
export type Editor = { name: string; color: string; colorLight: string };
