export { capnweb } from "./transport";
export type { CapnwebTransport } from "../websockets/options";
