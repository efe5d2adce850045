// What the page shares with the object: plain types and constants, no platform
// imports and no zod (the schemas are in schema.ts, on the server side), so the
// page type-checks against the DOM and its bundle stays small.

export const COLUMNS = ["todo", "doing", "done"] as const;
export type Column = (typeof COLUMNS)[number];

export type Card = { id: string; text: string; column: Column };

/** The synced state. */
export type BoardState = { cards: Card[] };

/** The callables a client may call (`BoardCallables` implements it). */
export interface BoardApi {
  /** @returns the new card */
  addCard(text: string, column: Column): Promise<Card>;
  /** @returns whether the card was found */
  moveCard(id: string, column: Column): Promise<boolean>;
  /** @returns whether the card was found */
  removeCard(id: string): Promise<boolean>;
  /** Tells the others this editor is typing a card. */
  typing(): Promise<void>;
}

/** What each open page publishes as its presence: a name, a colour, and its pointer over the board (fractions of its width and height). */
export type Viewer = { name: string; color: string; cursor?: { x: number; y: number } };

/** Sent to the others while an editor types a new card: coalesced, at most one per editor per tick. */
export type TypingMessage = { type: "typing"; id: string; name: string };

/** Sent to a connection the Worker promoted from viewer to editor. */
export type PromotedMessage = { type: "promoted" };
