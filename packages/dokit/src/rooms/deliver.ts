import { DELIVER_PATH, KEY_HEADER, namespaceOf } from "./names";
import type { Delivered } from "./types";

/** Called before a delivery to shard `shard` is sent (`"request"`) and after it is answered (`"answer"`); throwing fails the delivery. */
export type DeliveryHook = (shard: string, phase: "request" | "answer") => void;

/** A shard a delivery goes to: its object name and the binding of its class. */
export interface DeliveryTarget {
  name: string;
  binding: string;
}

/**
 * Sends one delivery (its body already JSON) to a shard's delivery route, with the room's key.
 * @returns what the shard confirmed, or `undefined` when it answered 410 (it is no member of the room)
 * @throws when the call fails or the shard answers another error
 */
export async function deliverTo(env: object, target: DeliveryTarget, key: string, body: string, hook: DeliveryHook | undefined): Promise<Delivered | undefined> {
  hook?.(target.name, "request");
  const namespace = namespaceOf(env, target.binding, "RoomSequencer");
  const stub = namespace.get(namespace.idFromName(target.name));
  const response = await stub.fetch(`https://room.dokit${DELIVER_PATH}`, {
    method: "POST",
    headers: { [KEY_HEADER]: key, "content-type": "application/json" },
    body,
  });
  if (response.status === 410) return void (await response.body?.cancel());
  if (!response.ok) throw new Error(`the shard answered ${response.status} ${await response.text()}`);
  // SAFETY: the shard's delivery route answers a Delivered.
  const delivered = (await response.json()) as Delivered;
  hook?.(target.name, "answer");
  return delivered;
}
