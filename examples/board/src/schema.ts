// The board's schemas: State validates every change with BoardSchema (from a
// callable or from a client's setState), and the callables' arguments are parsed
// with the field schemas before a method runs.
import { z } from "zod";
import { type BoardState, COLUMNS } from "./api";

export const ColumnSchema = z.enum(COLUMNS);
export const CardText = z.string().trim().min(1).max(200);
export const CardId = z.string().min(1).max(16);

export const BoardSchema = z.object({
  cards: z.array(z.object({ id: CardId, text: CardText, column: ColumnSchema })).max(100),
}) satisfies z.ZodType<BoardState>;
