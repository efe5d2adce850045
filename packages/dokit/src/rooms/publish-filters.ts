// The filters of a publish, as server code gives them (`RoomShard.publish`, `publishToRoom`) and as
// a message carries them to the sequencer and on to every shard.

import type { OutgoingMessage } from "./types";

/** Options of a publish (`RoomShard.publish`, `publishToRoom`). */
export interface RoomPublishOptions {
  /** Connection ids left out, room-wide. */
  except?: string | readonly string[];
  /** Only connections with this tag, room-wide. */
  tag?: string;
}

/** @returns the filters of a publish, as a message carries them */
export function filters(options: RoomPublishOptions): Pick<OutgoingMessage, "except" | "tag"> {
  const except = options.except === undefined ? undefined : typeof options.except === "string" ? [options.except] : [...options.except];
  return { ...(except?.length && { except }), ...(options.tag !== undefined && { tag: options.tag }) };
}
