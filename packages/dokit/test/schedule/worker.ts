export { HangingTimers, KeepingTimers, Timers, UntypedTimers } from "./objects";

export default {
  fetch: () => new Response("schedule tests"),
} satisfies ExportedHandler<Env>;
