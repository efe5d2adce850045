// Loaded only through a dynamic import (late-context.ts): the first module of that Worker to
// reach getCurrentAgent().
import { getCurrentAgent } from "../../src/lifecycle/current";

/** @returns the id of the connection whose work is running, or `"none"` */
export function currentConnection(): string {
  return getCurrentAgent().connection?.id ?? "none";
}
