// useSession: one branch of a session (dokit/sessions' live history), re-rendered as it changes.
import { useEffect, useMemo, useSyncExternalStore } from "react";
import { SessionView, type SessionViewClient, type SessionViewMessage, type SessionViewOptions } from "../client/session";

/** What {@link useSession} returns. */
export interface UseSessionResult {
  /** The messages loaded, root → leaf. */
  readonly messages: SessionViewMessage[];
  /** Whether older messages exist (`loadMore()` loads the next page). */
  readonly hasMore: boolean;
  /** Whether the newest page has arrived on the current connection. */
  readonly loaded: boolean;
  /** Loads the next older page. */
  readonly loadMore: () => Promise<void>;
  /** Appends a message (client input: the server bounds its size). */
  readonly append: (message: SessionViewMessage, options?: { parentId?: string | null }) => Promise<{ inserted: boolean }>;
  /** Rewrites a stored message. */
  readonly update: (message: SessionViewMessage) => Promise<{ found: boolean }>;
  /** Follows the branch ending at `leafId` (`undefined`: the active leaf). */
  readonly follow: (leafId: string | undefined) => Promise<void>;
  /** The view underneath. */
  readonly view: SessionView;
}

/** What a component renders from: renewed on every change of the view. */
export type SessionSnapshot = { messages: SessionViewMessage[]; hasMore: boolean; loaded: boolean };

/** A useSyncExternalStore source over one view: a stable snapshot, renewed when the view changes. */
export function createSessionStore(view: SessionView) {
  const take = (): SessionSnapshot => ({ messages: view.messages, hasMore: view.hasMore, loaded: view.loaded });
  let snapshot = take();
  return {
    subscribe(onChange: () => void): () => void {
      const off = view.subscribe(() => {
        snapshot = take();
        onChange();
      });
      // Anything that changed between render and subscribe.
      const now = take();
      if (now.messages !== snapshot.messages || now.hasMore !== snapshot.hasMore || now.loaded !== snapshot.loaded) {
        snapshot = now;
        onChange();
      }
      return off;
    },
    get: (): SessionSnapshot => snapshot,
  };
}

/**
 * A session's history for a component: watches the session while mounted and re-renders when a page
 * loads or a message is appended, updated or deleted.
 * @param client - an AgentClient (for useAgent, its `client`)
 * @param options - the session, the branch, page bounds, the error callback (read when the client or session changes)
 */
export function useSession(client: SessionViewClient, options: SessionViewOptions = {}): UseSessionResult {
  const session = options.session ?? "";
  // A new view per client and session; the other options are read when it is made.
  const view = useMemo(() => new SessionView(client, options), [client, session]);
  useEffect(() => {
    view.start();
    return () => view.stop();
  }, [view]);
  const store = useMemo(() => createSessionStore(view), [view]);
  const snapshot = useSyncExternalStore(store.subscribe, store.get, store.get);
  return useMemo(
    () => ({
      ...snapshot,
      loadMore: () => view.loadMore(),
      append: (message: SessionViewMessage, appendOptions?: { parentId?: string | null }) => view.append(message, appendOptions),
      update: (message: SessionViewMessage) => view.update(message),
      follow: (leafId: string | undefined) => view.follow(leafId),
      view,
    }),
    [view, snapshot],
  );
}
