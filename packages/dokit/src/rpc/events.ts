import type { Observer } from "../lifecycle/capability";
import type { Connection } from "../lifecycle/connection";
import { errorMessage } from "../lifecycle/errors";
import type { Lifecycle } from "../lifecycle/lifecycle";

/**
 * Publishes `rpc` (and `rpc:error` when `failed`) on agents:rpc for a call begun at `began` (a `since`
 * reading), from every transport.
 * @param outcome - the error, or the number of chunks a stream sent
 */
export function publishRpc(
  observer: Observer,
  source: Lifecycle,
  connection: Connection,
  method: string,
  began: number,
  failed: boolean,
  outcome: unknown,
): void {
  // {connectionId, method, ok, durationMs, streaming?, chunks?}
  const payload = { connectionId: connection.id, method, ok: !failed, began, ...(typeof outcome === "number" && { streaming: true, chunks: outcome }) };
  observer.emit("rpc", source, "rpc", payload);
  if (!failed) return;
  // SAFETY: a DokitError (or WireError) carries a string `code`; anything else has none.
  const code = (outcome as { code?: unknown } | null)?.code;
  observer.emit("rpc", source, "rpc:error", { ...payload, error: errorMessage(outcome), ...(typeof code === "string" && { code }) });
}
