export { Callables } from "./callables";
export type { ArgumentSchemas, CallablesOptions } from "./callables";
export type { AgentStub, CallableName } from "../rpc/stub-types";
export type { InferOutput, StandardSchema } from "../schema/standard-schema";
export { Refusal } from "../lifecycle/errors";
export type { CallablesErrorCode } from "./errors";
