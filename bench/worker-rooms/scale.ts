// The scale bench's objects (bench/rooms-scale.ts): the one-object baseline, a plain dokit
// WebSockets object that broadcasts the same frame a room's shard sends its clients, and a pair of
// objects that time one object-to-object call (DO RPC, or a fetch) for the cost model.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "dokit/lifecycle";
import { WebSockets } from "dokit/websockets";

/** One object holding every connection; `blast` sends one frame to all of them. */
export class BenchSingle extends DurableObject {
  readonly webSockets = new WebSockets();
  readonly lifecycle = Lifecycle.install(this).use(this.webSockets);
  #seq = 0;

  /** Broadcasts `{"type":"dokit_room","seq","data"}`, the frame a shard sends for a message published from the Worker. */
  blast(data: string): number {
    const seq = ++this.#seq;
    this.webSockets.broadcast(`{"type":"dokit_room","seq":${seq},"data":${data}}`);
    return seq;
  }

  /** The same broadcast after a storage write, as a shard stores how far it delivered before it sends (the bench's `--scale-loop` diagnostic). */
  blastStored(data: string): number {
    const seq = ++this.#seq;
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS bench_cursor (k INTEGER PRIMARY KEY, seq INTEGER)");
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO bench_cursor (k, seq) VALUES (0, ?)", seq);
    this.webSockets.broadcast(`{"type":"dokit_room","seq":${seq},"data":${data}}`);
    return seq;
  }

  /**
   * The same frame sent connection by connection over `getConnections()`, reading each one's id, as
   * a shard's delivery walks them (the bench's `--scale-loop` diagnostic).
   */
  blastLoop(data: string): number {
    const frame = `{"type":"dokit_room","seq":${++this.#seq},"data":${data}}`;
    let ids = 0;
    for (const connection of this.webSockets.getConnections()) {
      ids += connection.id.length;
      connection.send(frame);
    }
    return ids > 0 ? this.#seq : -1;
  }
}

/** The callee of the call-cost measure: answers an RPC call and a fetch with the least work. */
export class BenchPairCallee extends DurableObject {
  ping(n: number): number {
    return n + 1;
  }

  override async fetch(request: Request): Promise<Response> {
    return new Response(request.headers.get("x-n") ?? "");
  }
}

/** The caller of the call-cost measure. */
export class BenchPairCaller extends DurableObject<{ PAIR_CALLEE: DurableObjectNamespace<BenchPairCallee> }> {
  /**
   * Makes `calls` calls to one callee, one after another, in groups of `group`.
   * @returns each group's mean time per call, in ms (workerd's clock advances across I/O, in whole ms locally: a group of 100 reads to 0.01 ms)
   */
  async run(mode: "rpc" | "fetch", calls: number, group: number): Promise<number[]> {
    const callee = this.env.PAIR_CALLEE.get(this.env.PAIR_CALLEE.idFromName("callee"));
    const means: number[] = [];
    for (let done = 0; done < calls; done += group) {
      const start = performance.now();
      for (let i = 0; i < group; i++) {
        if (mode === "rpc") await callee.ping(i);
        else await (await callee.fetch("http://pair/", { headers: { "x-n": String(i) } })).text();
      }
      means.push((performance.now() - start) / group);
    }
    return means;
  }
}
