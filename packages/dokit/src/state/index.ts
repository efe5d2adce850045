export { State } from "./state";
export type { StateConstructor } from "./state";
export type { CheckedStateOptions, SchemaStateOptions, StateOptions } from "./options";
export type { StateCheck, StateSource, StateValidator } from "./validate";
export { MAX_STATE_BYTES } from "./serialize";
export type { StandardSchema } from "../schema/standard-schema";
export type { Connection } from "../lifecycle/connection";
export type { StateErrorCode } from "./errors";
