export { findBinding, getAgentByName, matchAgentPath, routeAgentRequest } from "./route";
export type { BeforeHook, RouteMatch, RouteOptions } from "./route";
export { kebab } from "../protocol/kebab";
