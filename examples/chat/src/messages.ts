// The chat's own messages (JSON text frames), shared by the room and the page.

/** What each connection keeps in its attachment: it survives hibernation. */
export type Member = { nickname: string };

/** Messages a browser sends. */
export type ChatInput = { type: "say"; text: string } | { type: "nick"; nickname: string };

/** Messages the room sends. */
export type ChatEvent =
  | { type: "welcome"; room: string; nickname: string; members: string[] }
  | { type: "joined"; nickname: string }
  | { type: "left"; nickname: string }
  | { type: "renamed"; from: string; to: string }
  | { type: "said"; from: string; text: string; at: number }
  | { type: "error"; message: string };
