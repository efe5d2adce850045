// The rows an object's SQL writes, counted inside a bench worker (worker-streams/, worker-tasks/,
// worker-sessions/): every statement run through the object's `sql.exec` while the counter is
// installed, summed from each statement's cursor `rowsWritten`. Written without the Workers types
// so both the workers and the Node scripts' typecheck can read it.

/** What the counter needs of `ctx.storage.sql`. */
interface Sql {
  /** SqlStorage.exec; its bindings are whatever values SQLite takes. */
  // SAFETY: `any` lets SqlStorage's generic exec be passed here and called back unchanged.
  exec(query: string, ...bindings: any[]): { readonly rowsWritten: number };
}

/** A row counter installed on an object's SQL. */
export interface RowCounter {
  /** @returns the rows written since the counter was installed or this was last called */
  written(): number;
  /** Puts the object's own `sql.exec` back; the counts so far can still be read. */
  uninstall(): void;
}

/** Wraps `sql.exec` (until `uninstall()`) to count the rows each statement writes. */
export function countRows(sql: Sql): RowCounter {
  const exec = sql.exec;
  const cursors: { readonly rowsWritten: number }[] = [];
  sql.exec = (query, ...bindings) => {
    const cursor = exec.call(sql, query, ...bindings);
    cursors.push(cursor);
    return cursor;
  };
  return {
    written() {
      let rows = 0;
      for (const cursor of cursors.splice(0)) rows += cursor.rowsWritten;
      return rows;
    },
    uninstall() {
      sql.exec = exec;
    },
  };
}
