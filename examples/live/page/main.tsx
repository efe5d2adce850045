// The live page: React with useRoom from dokit/react. `?room=` picks the event, `?name=` the name
// others see, `?shard=<0..3>` the shard this tab joins (else the router hashes its id).
import { type FormEvent, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { useRoom } from "dokit/react";
import { type LiveMessage, MAX_NAME, MAX_TEXT, REACTIONS, type Reaction, readLiveMessage, ROOM_NAME, SHARD_COUNT } from "../src/api";

const params = new URLSearchParams(location.search);
const room = ROOM_NAME.test(params.get("room") ?? "") ? (params.get("room") as string) : "keynote";
const NAMES = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Radia", "Edsger", "Frances"];
const me = (params.get("name") ?? `${NAMES[Math.floor(Math.random() * NAMES.length)]}-${Math.floor(Math.random() * 100)}`).slice(0, MAX_NAME);
const shardHint = params.get("shard");
// The room's route below wherever the page is mounted (`/live/` under `pnpm dev`, `/` on its own).
const roomPath = new URL(`room/${room}`, location.href).pathname;

/** A message as the page lists it: what readLiveMessage read, at its seq. */
type Line = { seq: number; message: LiveMessage };
/** Words beside the reactions, for screens without an emoji font. */
const LABELS: Record<Reaction, string> = { "👏": "clap", "❤️": "love", "🎉": "party", "❓": "question" };

function App() {
  const [offline, setOffline] = useState(false);
  const [note, setNote] = useState("");
  const [pending, setPending] = useState(0);
  const [tallies, setTallies] = useState<Record<string, number>>({});
  const live = useRoom<unknown>({
    basePath: roomPath.slice(1),
    query: shardHint === null ? undefined : { shard: shardHint },
    // From the start of the room's log (its newest 500): a viewer who joins late sees the recent messages.
    since: 0,
    keep: 500,
    minReconnectionDelay: 200,
    maxReconnectionDelay: 2000,
    // Reactions are tallied from every message, whatever `keep` drops from the list.
    onRoomMessage: ({ data, from }) => {
      const message = readLiveMessage(data, from);
      if (message?.kind === "react") setTallies((now) => ({ ...now, [message.emoji]: (now[message.emoji] ?? 0) + 1 }));
    },
    onDrain: () => setNote("This tab's shard was drained: it reconnected and resumed after its last message."),
    onPublishError: ({ error }) => setNote(`The room refused a message: ${error}`),
  });
  const lines: Line[] = [];
  for (const { seq, data, from } of live.messages) {
    const message = readLiveMessage(data, from);
    if (message) lines.push({ seq, message });
  }

  useEffect(() => {
    if (live.joined) document.body.dataset.ready = "true";
  }, [live.joined]);
  const log = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [live.messages]);

  /** Publishes; while offline the message waits, and is sent when the tab is back. */
  const publish = (message: LiveMessage) => {
    setPending((n) => n + 1);
    live.publish(message).finally(() => setPending((n) => n - 1)).catch(() => {});
  };
  const say = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const field = event.currentTarget.elements.namedItem("text") as HTMLInputElement;
    const text = field.value.trim().slice(0, MAX_TEXT);
    field.value = "";
    if (text) publish({ kind: "say", name: me, text });
  };
  const announce = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const field = event.currentTarget.elements.namedItem("announcement") as HTMLInputElement;
    const text = field.value.trim();
    field.value = "";
    if (!text) return;
    const response = await fetch(`${roomPath}/announce`, { method: "POST", body: JSON.stringify({ text }) });
    if (!response.ok) setNote(`Announcement refused: ${await response.text()}`);
  };
  const drain = async () => {
    if (live.shard === undefined) return;
    setNote("");
    const response = await fetch(`${roomPath}/drain?shard=${live.shard}`, { method: "POST" });
    if (!response.ok) setNote(`Drain refused: ${await response.text()}`);
  };
  const toggleOffline = () => {
    // Closed for good until reconnect(): the member then resumes after its last seq, on its shard.
    if (offline) live.member.client.reconnect();
    else live.member.client.close();
    setOffline(!offline);
  };

  const status = offline ? "offline" : live.joined ? "live" : "reconnecting…";
  return (
    <>
      <header>
        <h1>dokit live</h1>
        <span>event <b id="room">{room}</b></span>
        <span>you are <b id="me">{me}</b></span>
        <span id="status" className={live.joined ? "live" : "away"}>{status}</span>
      </header>
      <ul className="stats" aria-label="room">
        <li>shard <b id="shard">{live.shard ?? "…"}</b> of {SHARD_COUNT}</li>
        <li><b id="count">{live.joined || live.shard !== undefined ? live.count : "…"}</b> in the room</li>
        <li>last seq <b id="seq">{live.seq ?? "…"}</b></li>
        <li>drained <b id="drains">{live.drains}</b>×</li>
        {pending > 0 && <li id="pending"><b>{pending}</b> waiting for the room</li>}
      </ul>
      <ul id="log" ref={log} aria-live="polite">
        {live.gaps.map(({ from, to }) => (
          <li key={`gap-${from}`} className="gap">Messages {from} to {to} are no longer kept.</li>
        ))}
        {lines.map(({ seq, message }) => (
          <li key={seq} data-seq={seq} className={message.kind}>
            <span className="seq">#{seq}</span>{" "}
            {message.kind === "say" && <><b>{message.name}</b>: {message.text}</>}
            {message.kind === "react" && <><b>{message.name}</b> reacted {message.emoji} {LABELS[message.emoji]}</>}
            {message.kind === "announce" && <><b>host</b>: {message.text}</>}
          </li>
        ))}
      </ul>
      <div className="reactions" aria-label="reactions">
        {REACTIONS.map((emoji: Reaction) => (
          <button key={emoji} type="button" data-emoji={emoji} onClick={() => publish({ kind: "react", name: me, emoji })}>
            {emoji} {LABELS[emoji]} <span className="tally">{tallies[emoji] ?? 0}</span>
          </button>
        ))}
      </div>
      <form id="say" onSubmit={say}>
        <input name="text" autoComplete="off" maxLength={MAX_TEXT} placeholder="Ask or say something" aria-label="message" />
        <button>Send</button>
      </form>
      <form id="announce" onSubmit={announce}>
        <input name="announcement" autoComplete="off" maxLength={MAX_TEXT} placeholder="Announcement (as the host, published by the Worker)" aria-label="announcement" />
        <button>Announce</button>
      </form>
      <div className="controls">
        <button type="button" id="drain" onClick={drain} disabled={offline || live.shard === undefined}>Drain my shard</button>
        <button type="button" id="offline" onClick={toggleOffline}>{offline ? "Come back" : "Go offline"}</button>
        <span id="note" role="status">{note}</span>
        <a href={`/agents/live-shard/${room}%23${live.shard ?? 0}/__dokit`} target="_blank" rel="noreferrer">inspect this shard</a>
      </div>
    </>
  );
}

createRoot(document.getElementById("root") as HTMLElement).render(<App />);
