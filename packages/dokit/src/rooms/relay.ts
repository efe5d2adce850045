import { DurableObject } from "cloudflare:workers";
import { type DeliveryHook, type DeliveryTarget, deliverTo } from "./deliver";
import { namespaceOf, parseShardName, stubOf } from "./names";

/** What became of a delivery to one shard: confirmed, refused with 410 (no member), or failed. */
export type Outcome = { delivered: number; connections: number } | { left: true } | { failed: string };

/** How one delivery spreads: the room's key, the widest fan-out of one object, and the relays' binding. */
export interface Spread {
  key: string;
  /** The most calls one object makes per delivery (the tree's width). */
  width: number;
  /** The name of the `RoomRelay` binding. */
  relays: string;
  /** Where this object sits in the tree (`""` for the sequencer), to name the relays below it. */
  path: string;
}

/**
 * Delivers one delivery (its body already JSON) to every target: directly when there are at most
 * `width` of them, else through relays, each given a contiguous share of the targets: the fewest
 * relays whose shares are at most `width`, or `width` relays whose shares go on down a level (so no
 * object makes more than `width` calls, and the tree is log_width(shards) deep). A relay that fails
 * fails its share.
 * @returns the outcome per target, in the targets' order
 */
export async function spread(env: object, body: string, targets: readonly DeliveryTarget[], how: Spread, hook: DeliveryHook | undefined): Promise<Outcome[]> {
  if (targets.length <= how.width) {
    return Promise.all(
      targets.map((target) =>
        deliverTo(env, target, how.key, body, hook).then(
          (delivered): Outcome => (delivered ? { delivered: delivered.delivered, connections: delivered.connections } : { left: true }),
          (error: unknown): Outcome => ({ failed: String(error) }),
        ),
      ),
    );
  }
  // The fewest relays that keep each share within `width` (one level), else `width` shares (and levels below).
  const groups = Math.min(how.width, Math.ceil(targets.length / how.width));
  const size = Math.ceil(targets.length / groups);
  const room = parseShardName((targets[0] as DeliveryTarget).name).room;
  const shares: Promise<Outcome[]>[] = [];
  for (let i = 0; i * size < targets.length; i++) {
    const share = targets.slice(i * size, (i + 1) * size);
    const path = `${how.path}${how.path ? "." : ""}${i}`;
    const relay = stubOf<RelayApi>(namespaceOf(env, how.relays, "RoomSequencer relays"), relayName(room, path));
    shares.push(
      relay.relay(body, share, { ...how, path }).catch((error: unknown) => share.map((): Outcome => ({ failed: `relay ${path}: ${String(error)}` }))),
    );
  }
  return (await Promise.all(shares)).flat();
}

/** @returns the object name of the relay at `path` (`0`, `0.3`, …) of `room`'s tree */
export function relayName(room: string, path: string): string {
  return `${room}~relay~${path}`;
}

interface RelayApi {
  relay(body: string, targets: DeliveryTarget[], how: Spread): Promise<Outcome[]>;
}

/** Options of {@link RoomRelay} (pass them from a subclass's constructor). */
export interface RoomRelayOptions {
  /** For chaos tests and benches only: as `RoomSequencer`'s `deliveryHook`, around this relay's deliveries. */
  deliveryHook?: DeliveryHook;
}

/**
 * A relay of a room's fan-out tree: a plain object that forwards one delivery to a share of the
 * room's shards (or to relays below it), so the sequencer and every relay make at most `width`
 * calls per delivery. It keeps nothing: the sequencer holds each shard's cursor and retries what
 * a relay did not confirm, and shards drop what they already have. Re-export it from your Worker
 * and bind it (`{ "name": "ROOM_RELAY", "class_name": "RoomRelay" }`) when a room can have more
 * shards than the sequencer's `fanout`. Its method is called by the sequencer and by other relays.
 */
export class RoomRelay extends DurableObject<object> implements RelayApi {
  readonly #hook: DeliveryHook | undefined;

  constructor(ctx: DurableObjectState, env: object, options: RoomRelayOptions = {}) {
    super(ctx, env);
    this.#hook = options.deliveryHook;
  }

  /** Forwards a delivery to `targets` (directly, or through relays below). @returns the outcome per target */
  async relay(body: string, targets: DeliveryTarget[], how: Spread): Promise<Outcome[]> {
    return spread(this.env, body, targets, how, this.#hook);
  }
}
