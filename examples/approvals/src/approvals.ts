// Expense approvals as a Task: each expense is a run that records it, parks until a
// manager decides (an external event, sent by the Worker's /decide route), then, when
// approved, waits out a cooling-off period and pays. The run survives evictions and
// restarts in every one of those waits; nothing stays in memory while it waits.
import { DurableObject } from "cloudflare:workers";
import { Inspector } from "dokit/inspector";
import { Lifecycle } from "dokit/lifecycle";
import { Observability } from "dokit/observability";
import { NonRetryableError, Tasks, type TaskStep } from "dokit/tasks";

export interface Expense {
  amount: number;
  note: string;
}

/** How long an approved expense waits before it is paid (short, for the demo). */
export const COOLING_OFF = "5 seconds";

export class Approvals extends DurableObject<Env> {
  readonly tasks = new Tasks({
    definitions: {
      "expense@v1": async (expense: Expense, step: TaskStep) => {
        const id = await step.do("record", () => this.#record(expense));
        await step.status("waiting for a manager's decision");
        const decision = await step.waitForEvent<{ approved: boolean; by: string }>("decision", { type: "decision", timeout: "7 days" });
        if (!decision.approved) return { id, approved: false, by: decision.by, paidAt: null };
        await step.status(`approved by ${decision.by}: cooling off for ${COOLING_OFF}`);
        await step.sleep("cooling-off", COOLING_OFF);
        const paidAt = await step.do("pay", { retries: { limit: 3, delay: "1 second" } }, ({ idempotencyKey }) => this.#pay(id, idempotencyKey));
        return { id, approved: true, by: decision.by, paidAt };
      },
    },
  });
  readonly inspector = new Inspector({ enabled: true, tasks: this.tasks, observability: new Observability() });
  readonly lifecycle = Lifecycle.install(this).use(this.tasks).use(this.inspector);

  /** Starts the approval of one expense. @returns its run id */
  async submit(expense: Expense): Promise<string> {
    await this.lifecycle.start();
    if (!(expense.amount > 0) || typeof expense.note !== "string") throw new NonRetryableError("an expense needs an amount above 0 and a note");
    return (await this.tasks.run("expense@v1", { amount: expense.amount, note: expense.note.slice(0, 200) })).runId;
  }

  /** Sends the manager's decision to the run. @returns false when there is no such open expense */
  async decide(runId: string, approved: boolean, by: string): Promise<boolean> {
    await this.lifecycle.start();
    return this.tasks.sendEvent(runId, "decision", { approved, by: by.slice(0, 50) });
  }

  /** @returns the newest expenses, as JSON: each run's state, status, result */
  async expenses(): Promise<string> {
    await this.lifecycle.start();
    return JSON.stringify(await this.tasks.list({ limit: 20 }));
  }

  /** @returns the run as JSON once settled, waiting for it up to `seconds` (no polling); else as it is then */
  async outcome(runId: string, seconds: number): Promise<string> {
    await this.lifecycle.start();
    const settled = await this.tasks.wait(runId, { timeout: Math.min(60, seconds) * 1000 }).catch(() => undefined);
    return JSON.stringify(settled === undefined ? await this.tasks.get(runId) : settled);
  }

  #record(expense: Expense): number {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS expenses (id INTEGER PRIMARY KEY, amount REAL, note TEXT, paid_at INTEGER, payment_key TEXT UNIQUE)");
    return this.ctx.storage.sql.exec<{ id: number }>("INSERT INTO expenses (amount, note) VALUES (?, ?) RETURNING id", expense.amount, expense.note).one().id;
  }

  /** Pays once per key: a replayed payment step finds its own earlier payment. */
  #pay(id: number, idempotencyKey: string): number {
    const paid = this.ctx.storage.sql.exec<{ paid_at: number }>("SELECT paid_at FROM expenses WHERE payment_key = ?", idempotencyKey).toArray()[0];
    if (paid) return paid.paid_at;
    const now = Date.now();
    this.ctx.storage.sql.exec("UPDATE expenses SET paid_at = ?, payment_key = ? WHERE id = ?", now, idempotencyKey, id);
    return now;
  }
}
