import { DurableObject } from "cloudflare:workers";
import { type AlarmWork, type Capability, type Claims, claimAlarm, getCurrentAgent, Lifecycle } from "../../src/lifecycle";

/** A capability that claims one route and records what it saw. */
export class RouteCapability implements Capability {
  readonly capabilityName: string;
  starts = 0;
  constructor(
    readonly path: string,
    name = "RouteCapability",
  ) {
    this.capabilityName = name;
  }
  attach(claims: Claims): void {
    claims.onStart(() => void this.starts++);
    claims.route(this.path, (request, path) => {
      const current = getCurrentAgent();
      return Response.json({
        path,
        method: request.method,
        agentIsHost: current.agent === claims.lifecycle.host,
        props: current.props ?? null,
        name: claims.lifecycle.name,
        className: claims.lifecycle.className,
      });
    });
    claims.route("/boom", () => {
      throw new Error("secret detail at line 42");
    });
    // Answers POST only; passes anything else on, to be answered as an unclaimed request.
    claims.route("/pass", (request) => (request.method === "POST" ? new Response("kept by the route") : undefined));
  }
}

/** A plain host: dokit installs every entry point. */
export class PlainHost extends DurableObject<Env> {
  readonly routes = new RouteCapability("/hello");
  readonly lifecycle = Lifecycle.install(this).use(this.routes);
  startProps: Record<string, unknown> | undefined;
  onStartAgent: unknown;

  onStart(props?: Record<string, unknown>) {
    this.startProps = props;
    this.onStartAgent = getCurrentAgent().agent;
  }

  onRequest(request: Request): Response {
    const url = new URL(request.url);
    if (url.pathname.endsWith("/fallthrough")) {
      return Response.json({ fallthrough: true, agentIsHost: getCurrentAgent().agent === this });
    }
    return new Response("host says no", { status: 404 });
  }

  async info(): Promise<{ name: string; startProps: { user?: string } | null; onStartAgentIsHost: boolean; starts: number }> {
    await this.lifecycle.start();
    return {
      name: this.lifecycle.name,
      startProps: (this.startProps as { user?: string } | undefined) ?? null,
      onStartAgentIsHost: this.onStartAgent === this,
      starts: this.routes.starts,
    };
  }
}

/** A host with its own fetch and webSocketMessage that delegates to dokit. */
export class DelegatingHost extends DurableObject<Env> {
  readonly lifecycle = Lifecycle.install(this, { delegates: ["fetch", "webSocketMessage"] }).use(
    new RouteCapability("/dokit"),
  );

  async fetch(request: Request): Promise<Response> {
    return (await this.lifecycle.fetch(request)) ?? new Response("the host's own answer");
  }

  async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (await this.lifecycle.webSocketMessage(ws, message)) return;
    ws.send(`host echo: ${String(message)}`);
  }
}

/** A start hook that fails on its first attempt. */
export class FlakyStart extends DurableObject<Env> {
  attempts = 0;
  readonly lifecycle = Lifecycle.install(this).use({
    capabilityName: "Flaky",
    attach: (claims) => {
      claims.onStart(async () => {
        this.attempts++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (this.attempts === 1) throw new Error("first start fails");
      });
      claims.route("/ok", () => Response.json({ attempts: this.attempts }));
    },
  });

  async concurrentStarts(): Promise<number> {
    await Promise.allSettled([this.lifecycle.start(), this.lifecycle.start(), this.lifecycle.start()]);
    return this.attempts;
  }
}

/** Alarm sharing between dokit work and the host's own alarm. */
export class AlarmHost extends DurableObject<Env> {
  reminder: AlarmWork | undefined;
  readonly lifecycle = Lifecycle.install(this).use({
    capabilityName: "Reminder",
    attach: (claims) => {
      this.reminder = claimAlarm(claims, "reminder", async () => {
        const runs = ((await this.ctx.storage.get<number>("dokitRuns")) ?? 0) + 1;
        await this.ctx.storage.put("dokitRuns", runs);
      });
    },
  });

  async onAlarm() {
    const runs = ((await this.ctx.storage.get<number>("hostRuns")) ?? 0) + 1;
    await this.ctx.storage.put("hostRuns", runs);
    await this.ctx.storage.put("hostAgentOk", getCurrentAgent().agent === this);
  }

  async setHostAlarm(at: number) {
    await this.lifecycle.start();
    await this.ctx.storage.setAlarm(at);
  }

  async scheduleDokit(at: number) {
    await this.lifecycle.start();
    await this.reminder?.schedule(at);
  }

  async read() {
    return {
      alarm: await this.ctx.storage.getAlarm(),
      dokitRuns: (await this.ctx.storage.get<number>("dokitRuns")) ?? 0,
      hostRuns: (await this.ctx.storage.get<number>("hostRuns")) ?? 0,
      hostAgentOk: (await this.ctx.storage.get<boolean>("hostAgentOk")) ?? null,
    };
  }
}
