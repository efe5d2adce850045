export { Inspector } from "./inspector";
export { isCrossSite, isLocalDevelopment } from "./guard";
export type {
  ConnectionView,
  InspectedJobs,
  InspectedTasks,
  InspectedMcp,
  InspectedMcpClients,
  InspectedState,
  InspectedWebSockets,
  InspectedYjs,
  InspectorOptions,
  InspectorSnapshot,
  SectionError,
  YjsView,
} from "./options";
export type { InspectorErrorCode } from "./errors";
