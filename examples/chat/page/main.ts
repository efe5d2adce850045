// The chat page: one AgentClient per tab. Room and nickname come from the
// page's query (`?room=general&nickname=ada`), so two tabs can pick their own.
import { AgentClient } from "dokit/client";
import type { ChatEvent, ChatInput } from "../src/messages";

const params = new URLSearchParams(location.search);
const room = params.get("room") ?? "general";
const $ = <T extends HTMLElement>(selector: string) => document.querySelector(selector) as T;
const log = $<HTMLUListElement>("#log");
const status = $<HTMLSpanElement>("#status");
const nicknameLabel = $<HTMLElement>("#nickname");
$<HTMLElement>("#room").textContent = room;

const client = new AgentClient({
  agent: "ChatRoom",
  name: "lobby",
  query: { room, nickname: params.get("nickname") },
  onConnectionError: (error) => (status.textContent = `disconnected: ${error.message}`),
});

function line(text: string, className = "", from?: string): void {
  const item = document.createElement("li");
  item.className = className;
  if (from) {
    const who = document.createElement("b");
    who.textContent = `${from}: `;
    item.append(who);
  }
  item.append(text);
  log.append(item);
  log.scrollTop = log.scrollHeight;
}

// Messages the room sends are ordinary frames: read them from `message` events.
client.addEventListener("message", (event) => {
  const data = (event as MessageEvent).data;
  if (typeof data !== "string") return;
  let message: ChatEvent;
  try {
    message = JSON.parse(data);
  } catch {
    return;
  }
  switch (message.type) {
    case "welcome":
      nicknameLabel.textContent = message.nickname;
      line(`Welcome, ${message.nickname}. Here: ${message.members.join(", ")}`, "notice");
      break;
    case "joined":
      line(`${message.nickname} joined`, "notice");
      break;
    case "left":
      line(`${message.nickname} left`, "notice");
      break;
    case "renamed":
      if (message.from === nicknameLabel.textContent) nicknameLabel.textContent = message.to;
      line(`${message.from} is now ${message.to}`, "notice");
      break;
    case "said":
      line(message.text, "", message.from);
      break;
    case "error":
      line(message.message, "notice");
      break;
  }
});

client.ready.then(() => {
  status.textContent = "connected";
  document.body.dataset.ready = "true";
});

const send = (input: ChatInput) => client.send(JSON.stringify(input));

$<HTMLFormElement>("#say").addEventListener("submit", (event) => {
  event.preventDefault();
  const field = (event.target as HTMLFormElement).elements.namedItem("text") as HTMLInputElement;
  const text = field.value.trim();
  field.value = "";
  if (!text) return;
  const rename = /^\/nick\s+(.+)$/.exec(text);
  if (rename?.[1]) return send({ type: "nick", nickname: rename[1] });
  send({ type: "say", text });
  line(text, "me", nicknameLabel.textContent ?? "me");
});
