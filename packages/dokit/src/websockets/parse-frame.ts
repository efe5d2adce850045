// Reading a text message as a frame: the first step of WebSockets' inbound path.
import { parseObject } from "../frames/parse";

/** @returns the parsed frame when `message` is a JSON object with a string `type`, else `undefined` */
export function parseFrame(message: string): (Record<string, unknown> & { type: string }) | undefined {
  const value = parseObject(message);
  // SAFETY: an object with a string `type`, checked here.
  return typeof value?.type === "string" ? (value as Record<string, unknown> & { type: string }) : undefined;
}
