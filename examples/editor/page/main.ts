// The editor page: CodeMirror 6 bound to the object's Yjs text by y-codemirror.next, synced
// through y-websocket's WebsocketProvider at /agents/doc/<name>/yjs. Each tab publishes its
// name and colour as awareness; y-codemirror.next draws the others' cursors and selections.
import { basicSetup, EditorView } from "codemirror";
import { EditorState } from "@codemirror/state";
import { yCollab } from "y-codemirror.next";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import { type Editor, TEXT } from "../src/api";

const COLORS = ["#d1495b", "#00798c", "#edae49", "#66a182", "#8e6c8a", "#3d5a80"];
const NAMES = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Radia", "Linus"];
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;

/** A colour of the name's own, so a name keeps its colour across reloads and tabs. */
const colorOf = (name: string): string => COLORS[[...name].reduce((hash, c) => (hash * 31 + c.charCodeAt(0)) >>> 0, 7) % COLORS.length] as string;

const params = new URLSearchParams(location.search);
const docName = params.get("doc") || "demo";
const name = (params.get("name") || pick(NAMES)).slice(0, 24);
const color = colorOf(name);
const me: Editor = { name, color, colorLight: `${color}33` };

const doc = new Y.Doc();
const text = doc.getText(TEXT);
// y-websocket connects to `${server}/${room}`: the room is "<name>/yjs", the document's sub-path.
const server = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/agents/doc`;
const provider = new WebsocketProvider(server, `${encodeURIComponent(docName)}/yjs`, doc);
provider.awareness.setLocalStateField("user", me);

new EditorView({
  parent: document.getElementById("editor") as HTMLElement,
  state: EditorState.create({
    doc: text.toString(),
    extensions: [basicSetup, EditorView.lineWrapping, yCollab(text, provider.awareness, { undoManager: new Y.UndoManager(text) })],
  }),
});

(document.getElementById("doc") as HTMLElement).textContent = docName;
const nameLabel = document.getElementById("name") as HTMLElement;
nameLabel.textContent = me.name;
nameLabel.style.color = me.color;

const status = document.getElementById("status") as HTMLElement;
provider.on("status", ({ status: state }) => {
  status.textContent = state === "connected" ? (provider.synced ? "synced" : "syncing…") : state === "connecting" ? "connecting…" : "offline, reconnecting…";
  status.className = state === "connected" && provider.synced ? "synced" : "";
});
provider.on("sync", (synced: boolean) => {
  status.textContent = synced ? "synced" : "syncing…";
  status.className = synced ? "synced" : "";
  // The browser test waits for this: the page has the object's document.
  if (synced) document.body.dataset.ready = "true";
});

// Who is here: every tab's awareness `user`, this one marked.
const here = document.querySelector("ul.here") as HTMLElement;
function renderEditors(): void {
  const items = [...provider.awareness.getStates()].flatMap(([client, state]) => {
    const user = (state as { user?: Partial<Editor> }).user;
    if (typeof user?.name !== "string") return [];
    const item = document.createElement("li");
    item.textContent = client === doc.clientID ? `${user.name} (you)` : user.name;
    item.style.borderColor = typeof user.color === "string" ? user.color : "#999";
    return [item];
  });
  here.replaceChildren(...items);
}
provider.awareness.on("change", renderEditors);
renderEditors();
