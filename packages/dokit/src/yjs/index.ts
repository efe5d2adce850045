export { YjsDocument, READONLY_REASON } from "./document";
export type { YjsDocumentOptions } from "./options";
export type { StoreSize } from "./store";
export type { YjsErrorCode } from "./errors";
