// The board's schemas: State validates every change with BoardSchema (from a
// callable or from a client's setState), and the callables' arguments are parsed
// with the field schemas before a method runs.
import { z } from "zod";
import { type BoardState, COLUMNS, type Viewer } from "./api";

export const ColumnSchema = z.enum(COLUMNS);
export const CardText = z.string().trim().min(1).max(200);
export const CardId = z.string().min(1).max(16);

export const BoardSchema = z.object({
  cards: z.array(z.object({ id: CardId, text: CardText, column: ColumnSchema })).max(100),
}) satisfies z.ZodType<BoardState>;

/** A page's presence: checked on every update, so a client cannot publish anything else. */
export const ViewerSchema = z.object({
  name: z.string().trim().min(1).max(24),
  color: z.string().regex(/^#[0-9a-f]{6}$/i),
  cursor: z.object({ x: z.number().min(0).max(1), y: z.number().min(0).max(1) }).optional(),
}) satisfies z.ZodType<Viewer>;
