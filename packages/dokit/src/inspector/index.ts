export { Inspector } from "./inspector";
export { isCrossSite, isLocalDevelopment } from "./guard";
export type {
  ConnectionView,
  InspectedJobs,
  InspectedMcp,
  InspectedMcpClients,
  InspectedState,
  InspectedWebSockets,
  InspectorOptions,
  InspectorSnapshot,
  SectionError,
} from "./options";
export type { InspectorErrorCode } from "./errors";
