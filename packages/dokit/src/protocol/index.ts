export * from "./frames";
export { kebab } from "./kebab";
