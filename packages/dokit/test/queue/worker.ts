export { CrashingWork, ScheduledWork, Work } from "./objects";

export default {
  fetch: () => new Response("queue tests"),
} satisfies ExportedHandler<Env>;
