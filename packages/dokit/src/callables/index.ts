export { Callables } from "./callables";
export type { ArgumentSchemas, CallablesOptions } from "./callables";
export type { MethodName, Methods } from "./methods";
export type { InferOutput, StandardSchema } from "./schema";
