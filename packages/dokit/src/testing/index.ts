export { openSocket, TestSocket } from "./socket";
export type { CloseInfo, OpenOptions, Upgrader } from "./socket";
export { connectionAttachment, hibernate } from "./hibernate";
export { expectHibernates } from "./hibernates";
export type { HibernationOptions, HibernationResult } from "./hibernates";
export { publicIdOf } from "./public-id";
