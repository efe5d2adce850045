// The first example of the reference's docs/tasks.md, copied with only its import paths
// changed ("agents/tasks" → dokit/tasks, "agents/lifecycle" → dokit/lifecycle): it must
// compile and run unchanged. `research`, `publish` and `ReportInput` are the example's own
// names for the user's code; they are defined below the class.
import { DurableObject } from "cloudflare:workers";
import { Tasks, type TaskStep } from "../../src/tasks";
import type { TaskReceipt } from "../../src/tasks";
import type { RunView } from "./objects";
import { Lifecycle } from "../../src/lifecycle";

interface ReportInput {
  reportId: string;
  topic: string;
}

export class ReportObject extends DurableObject<Env> {
  readonly tasks = new Tasks({
    definitions: {
      "build-report@v1": async (input: ReportInput, step: TaskStep) => {
        await step.status("Researching");

        const research = await step.do(
          "research",
          { retries: { limit: 4, delay: "2 seconds", backoff: "exponential" } },
          ({ signal }) => this.research(input.topic, { signal })
        );

        await step.sleep("editorial-delay", "30 seconds");
        await step.status("Publishing");

        const objectKey = `reports/${input.reportId}.json`;
        await step.do("publish", ({ idempotencyKey }) =>
          this.publish(objectKey, research, { idempotencyKey })
        );

        return { reportId: input.reportId, objectKey };
      }
    }
  });

  readonly lifecycle = Lifecycle.install(this).use(this.tasks);

  // ---- the user's own code, which the example leaves out

  async research(topic: string, _options: { signal: AbortSignal }): Promise<{ topic: string; findings: string[] }> {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS calls (what TEXT)");
    this.ctx.storage.sql.exec("INSERT INTO calls VALUES ('research')");
    return { topic, findings: [`${topic} matters`] };
  }

  async publish(objectKey: string, research: { topic: string; findings: string[] }, options: { idempotencyKey: string }): Promise<void> {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS calls (what TEXT)");
    this.ctx.storage.sql.exec("INSERT INTO calls VALUES (?)", `publish ${objectKey} ${research.findings.length} ${options.idempotencyKey}`);
  }

  async calls(): Promise<string[]> {
    return this.ctx.storage.sql.exec<{ what: string }>("SELECT what FROM calls").toArray().map((row) => row.what);
  }

  async startReport(input: ReportInput): Promise<{ receipt: TaskReceipt; run: RunView | null }> {
    await this.lifecycle.start();
    const receipt = await this.tasks.run("build-report@v1", input, { idempotencyKey: `report:${input.reportId}` });
    const buildReport = this.tasks.handle("build-report@v1");
    const run = await buildReport.get(receipt.runId); // result typed by the map
    return { receipt, run };
  }

  async report(runId: string): Promise<RunView | null> {
    await this.lifecycle.start();
    return this.tasks.handle("build-report@v1").get(runId);
  }

  /** Moves the run's editorial sleep and its wake to now: the test's stand-in for 30 seconds passing. */
  async skipSleep(runId: string): Promise<void> {
    const now = Date.now() - 1;
    this.ctx.storage.sql.exec("UPDATE dokit_task_steps SET wake_at = ? WHERE run = ? AND kind = 'sleep'", now, runId);
    this.ctx.storage.sql.exec("UPDATE dokit_task_jobs SET due = ? WHERE id = ?", now, runId);
    // The platform's alarm itself: when it fires, the alarm reads the run's wake from dokit_task_jobs.
    await (Object.getPrototypeOf(this.ctx.storage) as DurableObjectStorage).setAlarm.call(this.ctx.storage, now);
  }
}
