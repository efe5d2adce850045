export { Crashes, Deploys, Flows, Mixed, ReportObject } from "./objects";

export default {
  fetch: () => new Response("tasks tests"),
} satisfies ExportedHandler<Env>;
