export { Sleeper, Source, Streamer, Ticker } from "./objects";

export default {
  fetch(): Response {
    return new Response("dokit/testing tests", { status: 404 });
  },
};
