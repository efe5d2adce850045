// The chat page: the conversation from the session (SessionView: the newest page, then every change
// live), and the reply being written, read from its stream with client.streams.read. The reply's
// tokens read so far are kept in sessionStorage, so a reload shows them at once and reads on from
// that cursor: no token twice, none missed. When the reply lands in the session, the growing copy goes.
import { AgentClient, SessionView, StreamReadError } from "dokit/client";
import { streamIdOf, textOf, type Token } from "../src/api";

const chat = new URLSearchParams(location.search).get("chat") ?? "demo";
const client = new AgentClient({ agent: "AgentChat", name: chat });
const view = new SessionView(client);

const history = document.querySelector("#history") as HTMLOListElement;
const reply = document.querySelector("#reply") as HTMLLIElement;
const status = document.querySelector("#status") as HTMLParagraphElement;
const form = document.querySelector("#ask") as HTMLFormElement;
const input = form.querySelector("input") as HTMLInputElement;
const button = form.querySelector("button") as HTMLButtonElement;

/** The reply this tab was reading: the question's id and the tokens read so far. */
type Kept = { id: string; tokens: Token[] };
const storageKey = `agent-chat:${chat}`;
const kept = (): Kept | undefined => JSON.parse(sessionStorage.getItem(storageKey) ?? "null") ?? undefined;
const keep = (value: Kept) => sessionStorage.setItem(storageKey, JSON.stringify(value));

/** The question whose reply this page reads now. */
let reading: string | undefined;

/** Reads the reply to question `id` from the cursor this tab had, showing each token as it comes. */
async function follow(id: string): Promise<void> {
  reading = id;
  const saved = kept();
  const tokens = saved?.id === id ? saved.tokens : [];
  reply.textContent = tokens.join("");
  try {
    for await (const { chunk } of client.streams.read<Token>(streamIdOf(id), { from: tokens.length })) {
      tokens.push(chunk);
      keep({ id, tokens });
      reply.textContent += chunk;
    }
  } catch (error) {
    // The stream is gone: the reply is in the conversation already, or its message is on the way.
    const gone = error instanceof StreamReadError && (error.code === "STREAM_NOT_FOUND" || error.code === "STREAM_DELETED");
    if (!gone) status.textContent = `reading the reply: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function render(): void {
  history.replaceChildren(
    ...view.messages.map((message) => {
      const item = document.createElement("li");
      item.className = message.role;
      item.textContent = textOf(message);
      return item;
    }),
  );
  // A question without its reply yet: the reply is being written, into its stream.
  const last = view.messages.at(-1);
  const waiting = last?.role === "user";
  button.disabled = waiting;
  if (waiting && reading !== last.id) void follow(last.id);
  if (!waiting) reply.textContent = ""; // the reply is in the history now
  if (view.loaded) document.body.dataset.ready = "true";
}
view.subscribe(render);

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  const response = await fetch(new URL(`/agents/agent-chat/${encodeURIComponent(chat)}/send`, location.origin), {
    method: "POST",
    body: JSON.stringify({ id: crypto.randomUUID(), text }),
  });
  status.textContent = response.ok ? "" : await response.text();
  if (response.ok) input.value = "";
});
