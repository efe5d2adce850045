import type { ChatRoom } from "./chat-room";

declare global {
  interface Env {
    ChatRoom: DurableObjectNamespace<ChatRoom>;
  }
}
