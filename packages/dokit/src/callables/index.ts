export { Callables } from "./callables";
export type { ArgumentSchemas, CallablesOptions } from "./callables";
export type { AgentStub, CallableName } from "../shared/stub-types";
export type { InferOutput, StandardSchema } from "../shared/schema";
export { Refusal } from "../lifecycle/errors";
