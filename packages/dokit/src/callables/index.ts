export { Callables } from "./callables";
export type { ArgumentSchemas, CallablesOptions } from "./callables";
export type { InferOutput, StandardSchema } from "./schema";
