// The reference's documentation (agents/docs/sessions.md), its snippets in the order it shows them,
// with only the import paths changed ("agents/…" → dokit): they must type-check and run.
import { DurableObject } from "cloudflare:workers";
import { Lifecycle } from "../../src/lifecycle";
import { createCompactFunction, type SessionMessage, Sessions } from "../../src/sessions";

type UIMessage = SessionMessage;

export class ConversationObject extends DurableObject<Env> {
  readonly sessions = new Sessions();
  readonly lifecycle = Lifecycle.install(this).use(this.sessions);
  readonly session = this.sessions.session();
  messages: UIMessage[] = [];
  readonly seen: string[] = [];

  /** Runs every snippet; @returns what they produced, as JSON, for the test to check */
  async runAll(): Promise<string> {
    return JSON.stringify(await this.#snippets());
  }

  async #snippets(): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    const consume = async (message: SessionMessage) => {
      this.seen.push(message.id);
    };
    const sendBatch = async (batch: SessionMessage[]) => {
      this.seen.push(`batch:${batch.length}`);
    };
    const summarize = async (prompt: string) => `summary of ${prompt.length} characters`;
    const updateLocalProjection = async (message: SessionMessage) => {
      this.seen.push(`projection:${message.id}`);
    };
    const refreshProjection = async () => {
      this.seen.push("refresh");
    };
    const markProjectionStale = () => {
      this.seen.push("stale");
    };
    const toCachedMessage = (message: SessionMessage): UIMessage => message;
    const reloadFromStorage = async () => this.session.getHistory();

    // ## Write messages
    const result = await this.session.appendMessage({
      id: crypto.randomUUID(),
      role: "user",
      parts: [{ type: "text", text: "Hello" }],
    });

    result.inserted; // false when this ID already existed
    result.message; // exact stored form
    out.inserted = result.inserted;

    const userMessage = result.message;
    const alternativeReply: SessionMessage = { id: "alt", role: "assistant", parts: [{ type: "text", text: "Another answer" }] };
    await this.session.appendMessage(alternativeReply, {
      parentId: userMessage.id,
    });

    // Built as the snippet builds it; its append runs on the installed Sessions (one not installed has no storage).
    const sessions = new Sessions({
      reservedMetadataKeys: ["channel", "turnMetadata"],
    });
    void sessions;

    const clientMessage: SessionMessage = { id: "client-1", role: "user", parts: [{ type: "text", text: "from a client" }], metadata: { channel: "x", kept: 1 } };
    await this.sessions.session().appendMessage(clientMessage, {
      source: "client",
    });

    const session = this.session;
    const message: SessionMessage = { id: "client-1", role: "user", parts: [{ type: "text", text: "from a client, edited" }] };
    const messageId = "alt";
    await session.updateMessage(message); // SessionMessage | null
    await session.upsertMessage(message);
    await session.deleteMessages([messageId]);

    // ## Read history
    for await (const message of session.history()) {
      await consume(message);
    }

    const toolCallId = "call-1";
    const ownsToolCall = (message: SessionMessage, id: string) => message.parts.some((part) => part.toolCallId === id);
    const applyResult = (message: SessionMessage): SessionMessage => message;
    for await (const message of session.history({ newestFirst: true })) {
      if (ownsToolCall(message, toolCallId)) {
        await session.updateMessage(applyResult(message));
        break;
      }
    }

    for await (const batch of session.historyBatches({
      batchSize: 25,
      maxBatchBytes: 2 * 1024 * 1024,
    })) {
      await sendBatch(batch);
    }

    const recent = await session.getRecentHistory(8 * 1024 * 1024, 4);

    recent.messages;
    recent.truncated;
    recent.totalContentBytes;
    out.recent = recent.messages.length;

    const messages = await session.getHistory();
    out.history = messages.map((entry) => entry.id);

    const id = userMessage.id;
    const parentId = userMessage.id;
    await session.getMessage(id);
    await session.getLatestLeaf();
    await session.getBranches(parentId);
    await session.getHistoryRowStats();

    // ## Branches
    await session.appendMessage(alternativeReply, { parentId: userMessage.id });
    const branch = await session.getHistory({ leafId: alternativeReply.id });
    const alternatives = await session.getBranches(userMessage.id);
    out.branch = branch.map((entry) => entry.id);
    out.alternatives = alternatives.map((entry) => entry.id);

    const source = session;
    const destination = this.sessions.session("copy");
    {
      let parentId: string | null = null;
      for await (const message of source.history()) {
        await destination.importMessage(message, {
          parentId,
          createdAt: message.createdAt?.getTime() ?? Date.now(),
        });
        parentId = message.id;
      }
    }
    out.copied = (await destination.getHistory()).map((entry) => entry.id);

    // ## Compaction
    session
      .onCompaction(
        createCompactFunction({
          summarize: async (prompt) => summarize(prompt),
          keepRecentTokens: 20_000,
        }),
      )
      .compactAfter(80_000);

    const leafId = alternativeReply.id;
    await session.compact();
    await session.compact(leafId); // compact a specific branch

    const summary = "They said hello.";
    const fromMessageId = userMessage.id;
    const toMessageId = userMessage.id;
    await session.addCompaction(summary, fromMessageId, toMessageId);

    // ## Full-text search
    const results = await session.search("deployment failed");
    out.search = results.length;

    // ## Observe changes
    const unsubscribe = this.sessions.subscribe(async (event) => {
      if (event.sessionId !== "") return;
      switch (event.type) {
        case "append":
        case "update":
          await updateLocalProjection(event.message);
          break;
        case "delete":
        case "clear":
        case "compact":
        case "compaction":
          await refreshProjection();
          break;
        case "import":
          markProjectionStale();
          break;
      }
    });

    const stop = this.sessions.session("").mirror<UIMessage>({
      get: () => this.messages,
      set: (messages) => {
        this.messages = messages;
      },
      transform: (message) => toCachedMessage(message),
      intercept: async (event) => {
        if (event.type !== "compact") return false;
        this.messages = await reloadFromStorage();
        return true;
      },
    });
    await session.appendMessage({ id: "after-mirror", role: "user", parts: [{ type: "text", text: "deployment failed again" }] });
    out.mirrored = this.messages.map((entry) => entry.id);
    unsubscribe();
    stop();

    // ## Multiple sessions
    const support = this.sessions.session("support");
    const sales = this.sessions.session("sales");
    out.cached = support === this.sessions.session("support") && sales !== support;
    out.seen = this.seen;
    return out;
  }
}
