export { openSocket, TestSocket } from "./socket";
export type { CloseInfo, OpenOptions, Upgrader } from "./socket";
export { connectionAttachment, hibernate } from "./hibernate";
