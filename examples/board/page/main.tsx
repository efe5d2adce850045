// The board page: React with useAgent and usePresence from dokit/react. `?board=`
// picks the board, `?mode=view` opens it view-only, `?name=` sets the name others see.
import { type FormEvent, type PointerEvent, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import type { AgentStub } from "dokit/client";
import { useAgent, usePresence } from "dokit/react";
import { type BoardApi, type BoardState, type Card, COLUMNS, type Column, type TypingMessage, type Viewer } from "../src/api";

const params = new URLSearchParams(location.search);
const boardName = params.get("board") ?? "demo";
const LABELS: Record<Column, string> = { todo: "To do", doing: "Doing", done: "Done" };
const NAMES = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Radia", "Edsger", "Frances"];
const me: Viewer = {
  name: params.get("name") ?? NAMES[Math.floor(Math.random() * NAMES.length)]!,
  color: `#${Math.floor(Math.random() * 0xffffff).toString(16).padStart(6, "0")}`,
};

function App() {
  const [viewOnly, setViewOnly] = useState(params.get("mode") === "view");
  const [error, setError] = useState("");
  const [typing, setTyping] = useState<Record<string, { name: string; until: number }>>({});
  const agent = useAgent<BoardApi, BoardState, Viewer>({
    agent: "Board",
    name: boardName,
    query: { mode: params.get("mode") },
    onMessage: (event) => {
      if (typeof event.data !== "string") return;
      if (event.data.includes('"promoted"')) setViewOnly(false);
      if (event.data.startsWith('{"type":"typing"')) {
        const { id, name } = JSON.parse(event.data) as TypingMessage;
        setTyping((now) => ({ ...now, [id]: { name, until: Date.now() + 2000 } }));
      }
    },
  });
  const board = agent.stub as AgentStub<BoardApi>;
  const cards = agent.state?.cards ?? [];
  // Who is here: this page publishes its name, colour and pointer; the others' arrive at most once a tick.
  const here = usePresence(agent.client);
  const presence = agent.client.presence;
  useEffect(() => presence.set(me), [presence]);
  const area = useRef<HTMLDivElement>(null);
  const point = (event: PointerEvent<HTMLDivElement>) => {
    const box = area.current?.getBoundingClientRect();
    if (!box) return;
    const clamp = (value: number) => Math.min(1, Math.max(0, value));
    presence.set({ ...me, cursor: { x: clamp((event.clientX - box.left) / box.width), y: clamp((event.clientY - box.top) / box.height) } });
  };
  // A typing note shows for two seconds after the last one.
  useEffect(() => {
    const timer = setInterval(() => setTyping((now) => Object.fromEntries(Object.entries(now).filter(([, note]) => note.until > Date.now()))), 500);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    if (agent.identified) document.body.dataset.ready = "true";
  }, [agent.identified]);

  /** Runs a call; a refusal (view-only, a bad argument) shows as the page's alert. */
  const run = (call: () => Promise<unknown>) => {
    setError("");
    call().catch((reason: unknown) => setError(reason instanceof Error ? reason.message : String(reason)));
  };

  const add = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    run(() => board.addCard(String(data.get("text")), data.get("column") as Column).then(() => form.reset()));
  };

  const promote = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget).get("token"));
    run(async () => {
      const response = await fetch("promote", {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ board: boardName, connectionId: agent.id }),
      });
      if (!response.ok) throw new Error(`Promotion refused: ${response.status} ${await response.text()}`);
    });
  };

  return (
    <>
      <header>
        <h1>dokit board</h1>
        <span>board <b>{boardName}</b></span>
        <span className={viewOnly ? "badge view" : "badge"}>{viewOnly ? "view-only" : "editing"}</span>
        <span>{agent.identified ? "connected" : "connecting…"}</span>
      </header>
      <ul className="here" aria-label="here">
        {here.list.map(({ id, value }) => (
          <li key={id} style={{ borderColor: value.color }}>
            {value.name}
            {id === here.self ? " (you)" : ""}
          </li>
        ))}
      </ul>
      <div className="columns" ref={area} onPointerMove={point} onPointerLeave={() => presence.set(me)}>
        {here.others.map(({ id, value }) =>
          value.cursor ? (
            <div key={id} className="cursor" style={{ left: `${value.cursor.x * 100}%`, top: `${value.cursor.y * 100}%`, background: value.color }}>
              {value.name}
            </div>
          ) : null,
        )}
        {COLUMNS.map((column) => (
          <section className="column" key={column} aria-label={LABELS[column]}>
            <h2>{LABELS[column]}</h2>
            {cards
              .filter((card) => card.column === column)
              .map((card) => (
                <CardView key={card.id} card={card} board={board} run={run} />
              ))}
          </section>
        ))}
      </div>
      <form onSubmit={add}>
        <input
          name="text"
          placeholder="A new card"
          aria-label="card text"
          required
          autoComplete="off"
          onInput={() => !viewOnly && board.typing().catch(() => {})}
        />
        <select name="column" aria-label="column" defaultValue="todo">
          {COLUMNS.map((column) => (
            <option key={column} value={column}>{LABELS[column]}</option>
          ))}
        </select>
        <button>Add card</button>
      </form>
      <p className="typing" aria-live="polite">
        {Object.values(typing)
          .map((note) => `${note.name} is typing…`)
          .join(" ")}
      </p>
      <p role="alert">{error}</p>
      {viewOnly && (
        <form onSubmit={promote}>
          <input name="token" type="password" placeholder="Editor token (let-me-edit)" aria-label="editor token" />
          <button>Edit this board</button>
        </form>
      )}
    </>
  );
}

function CardView({ card, board, run }: { card: Card; board: AgentStub<BoardApi>; run: (call: () => Promise<unknown>) => void }) {
  const index = COLUMNS.indexOf(card.column);
  const move = (step: number) => {
    const column = COLUMNS[index + step];
    if (column) run(() => board.moveCard(card.id, column));
  };
  return (
    <div className="card">
      <button onClick={() => move(-1)} disabled={index === 0} aria-label="move left">←</button>
      <span>{card.text}</span>
      <button onClick={() => move(1)} disabled={index === COLUMNS.length - 1} aria-label="move right">→</button>
      <button onClick={() => run(() => board.removeCard(card.id))} aria-label="remove">×</button>
    </div>
  );
}

createRoot(document.querySelector("#root") as HTMLElement).render(<App />);
