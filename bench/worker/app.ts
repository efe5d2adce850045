// The behaviour every bench room implements, identically:
//   "e:<text>"  echoed to the sender (an ordinary, non-JSON message)
//   "b:<text>"  sent to every open connection, sender included (the sender times the fan-out)
//   {"type":"rpc","id","method":"echo","args":[x]}  answered {"type":"rpc","id","success":true,"done":true,"result":x}
//   {"type":"cf_agent_state","state":x}  stored, then sent to every other connection
//   connect: identity (stateFollows) then the state frame, as docs/protocol.md says
//   "i:"        answered "i:<id of this instance>" (shows that an eviction made a fresh instance)
//   a plain GET answers "ok" (startup and wake probes)
import { RpcTarget } from "cloudflare:workers";

export const INITIAL_STATE = { count: 0 };

/** @returns what the room does with an ordinary message: echo, broadcast, or nothing */
export function classify(message: string | ArrayBuffer): "echo" | "broadcast" | "instance" | undefined {
  if (typeof message !== "string") return undefined;
  if (message.startsWith("e:")) return "echo";
  if (message.startsWith("b:")) return "broadcast";
  if (message === "i:") return "instance";
  return undefined;
}

/** The callable target of the dokit and reference rooms. */
export class BenchCallables extends RpcTarget {
  echo(value: unknown): unknown {
    return value;
  }
}
